// A citations-only port, written from SPEC.md (STRIP, CITE, TID) alone: it declares the
// scope `read.cite` and the capability `citations.parse`, and nothing else.
import { createInterface } from "node:readline";

const OPEN = "<oai-mem-citation>", CLOSE = "</oai-mem-citation>";

function strip(text) {
  const bodies = [];
  let visible = "", rest = text;
  for (;;) {
    const at = rest.indexOf(OPEN);
    if (at < 0) { visible += rest; break; }
    visible += rest.slice(0, at);
    const after = rest.slice(at + OPEN.length);
    const end = after.indexOf(CLOSE);
    if (end < 0) { bodies.push(after); break; }
    bodies.push(after.slice(0, end));
    rest = after.slice(end + CLOSE.length);
  }
  return { visible, bodies };
}

function block(body, tag) {
  const open = `<${tag}>`, close = `</${tag}>`;
  const at = body.indexOf(open);
  if (at < 0) return null;
  const end = body.indexOf(close, at + open.length);
  return end < 0 ? null : body.slice(at + open.length, end);
}

function lines(text) {
  const out = text.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  if (out.length && out[out.length - 1] === "" && text.endsWith("\n")) out.pop();
  return text === "" ? [] : out;
}

// Unicode White_Space (Rust's char::is_whitespace): JavaScript's \s also has U+FEFF and lacks U+0085
const WS = "[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const trim = (s) => s.replace(new RegExp(`^${WS}+|${WS}+$`, "gu"), "");
const U32 = /^\+?[0-9]+$/;
const bound = (s) => (U32.test(s) && Number(s.replace("+", "")) <= 4294967295
  ? Number(s.replace("+", "")) : null);

function entry(raw) {
  const line = trim(raw);
  const cut = line.lastIndexOf("|note=[");
  if (cut < 0) return null;
  const tail = line.slice(cut + 7);
  if (!tail.endsWith("]")) return null;
  const location = line.slice(0, cut), colon = location.lastIndexOf(":");
  if (colon < 0) return null;
  const range = location.slice(colon + 1), dash = range.indexOf("-");
  if (dash < 0) return null;
  const start = bound(trim(range.slice(0, dash))), end = bound(trim(range.slice(dash + 1)));
  if (start === null || end === null) return null;
  return { path: trim(location.slice(0, colon)), line_start: start, line_end: end,
           note: trim(tail.slice(0, -1)) };
}

const HEX = /^[0-9a-fA-F]{32}$/;
function canonical(raw) {
  let s = raw;
  if (s.startsWith("urn:uuid:")) s = s.slice(9);
  else if (s.startsWith("{") && s.endsWith("}")) s = s.slice(1, -1);
  let hex;
  if (/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(s)) {
    hex = s.replace(/-/g, "");
  } else if (HEX.test(s) && s === raw) hex = s;
  else return null;
  hex = hex.toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function parse(text) {
  const { visible, bodies } = strip(text);
  const entries = [], ids = [];
  for (const body of bodies) {
    const listed = block(body, "citation_entries");
    if (listed !== null) for (const l of lines(listed)) { const e = entry(l); if (e) entries.push(e); }
    let idBlock = block(body, "rollout_ids");
    if (idBlock === null) idBlock = block(body, "thread_ids");
    if (idBlock !== null) {
      for (const l of lines(idBlock)) {
        const id = trim(l);
        if (id && !ids.includes(id)) ids.push(id);
      }
    }
  }
  const citation = entries.length || ids.length ? { entries, rollout_ids: ids } : null;
  const thread_ids = ids.map(canonical).filter((x) => x !== null);
  return { visible_text: visible, citation, thread_ids };
}

const OPS = {
  start: () => ({ implementation: { name: "citations-js", version: "0.1.0", language: "javascript" },
                  protocol_version: 1, capabilities: ["citations.parse"], scope: ["read.cite"] }),
  stop: () => ({}),
  "citations.parse": (a) => parse(a.text),
};

const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  const op = OPS[msg.op];
  const reply = op
    ? { seq: msg.seq, ok: true, result: op(msg.args || {}) }
    : { seq: msg.seq, ok: false, error: { kind: "unsupported", message: `no ${msg.op}` } };
  process.stdout.write(JSON.stringify(reply) + "\n");
  if (msg.op === "stop") rl.close();
});
