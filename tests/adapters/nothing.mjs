// A stdio adapter that declares every capability and does nothing: each operation answers
// the smallest result its schema admits. Checks must report `fail` on it, never `error`.
import { createInterface } from "node:readline";

const CAPABILITIES = [
  "startup", "agent.apply_patch", "clock.inject", "config.resolve", "tokens.approx",
  "session.subagent", "startup.without-state-db", "jobs.stage1", "auth.chatgpt",
  "jobs.phase2", "citations.parse", "turn.message", "turn.instructions", "memory.tools",
  "turn.event",
];
const capabilities = process.env.NOTHING_CAPABILITIES
  ? process.env.NOTHING_CAPABILITIES.split(",").filter(Boolean) : CAPABILITIES;

const MEMORIES = {
  generate_memories: false, use_memories: false, dedicated_tools: false,
  disable_on_external_context: false, min_rollout_idle_hours: 0, max_rollout_age_days: 0,
  max_rollouts_per_startup: 0, max_raw_memories_for_consolidation: 0, max_unused_days: 0,
  min_rate_limit_remaining_percent: 0, extract_model: "", consolidation_model: "",
};

const OPS = {
  start: () => ({ implementation: { name: "nothing", version: "0.0.0", language: "javascript" },
                  protocol_version: 1, capabilities }),
  stop: () => ({}),
  startup: () => ({ session_thread_id: null }),
  "config.resolve": () => ({ feature_memories: false, memories: MEMORIES }),
  "tokens.approx": () => ({ tokens: 0 }),
  "stage1.claim": () => ({ outcome: "skipped_up_to_date", token: null }),
  "stage1.finish": () => ({ applied: false }),
  "phase2.claim": () => ({ outcome: "skipped_cooldown", token: null, input_watermark: 0 }),
  "phase2.heartbeat": () => ({ applied: false }),
  "phase2.finish": () => ({ applied: false }),
  "citations.parse": (a) => ({ visible_text: a.text, citation: null, thread_ids: [] }),
  "turn.message": (a) => ({ visible_text: a.text, citation: null, thread_ids: [],
                            usage_updates: 0 }),
  "turn.instructions": () => ({ developer_fragments: [] }),
  "turn.tools": () => ({ tools: [] }),
  "tools.call": (a) => ({ results: a.calls.map(() => ({ output: {} })) }),
  "turn.event": () => ({ polluted: false }),
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
