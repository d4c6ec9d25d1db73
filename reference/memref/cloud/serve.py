"""`python -m memref.cloud.serve`: run the cloud service on a loopback port and print its
address (`listening on http://HOST:PORT`) once it accepts connections: the socket listens and
the server has started (its lifespan ran and it serves the socket) before the line is
printed."""

from __future__ import annotations

import argparse
import logging
import socket
import sys

try:
    import uvicorn

    from memref.cloud import worker
    from memref.cloud.app import create_app
except ModuleNotFoundError as exc:  # the service stack is the `cloud` extra
    sys.exit(f"memref.cloud.serve: {exc.name} is not installed; the cloud service needs the "
             "cloud extra: pip install 'memconform[cloud]'")

DEFAULT_DB = "sqlite:///memref-cloud.sqlite"
DEFAULT_WORKER_INTERVAL_S = 60.0
BACKLOG = 2048


class _Server(uvicorn.Server):
    """A uvicorn server that announces its address once it serves its socket."""

    def __init__(self, config: uvicorn.Config, address: str) -> None:
        super().__init__(config)
        self.address = address

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and not self.should_exit:
            print(f"listening on {self.address}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memref-cloud", description=__doc__)
    parser.add_argument("--db", default=DEFAULT_DB,
                        help="SQLAlchemy URL: sqlite:///FILE (default) or "
                             "postgresql+psycopg://USER@HOST:PORT/DB")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--conformance-token", default=None,
                        help="enable the /conformance API with this token (tests only)")
    parser.add_argument("--worker-interval", type=float, default=None,
                        help="seconds between worker rounds; 0 turns the loop off (default: "
                             "60, or off when the conformance API drives the rounds)")
    args = parser.parse_args(argv)
    try:
        app = create_app(args.db, args.conformance_token)
    except Exception as exc:  # a bad URL or an unreachable database
        print(f"memref-cloud: cannot open the database {args.db!r}: {exc}", file=sys.stderr)
        return 2
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # inherited by connections
    sock.bind((args.host, args.port))
    sock.listen(BACKLOG)  # connections queue from now on; they are served once it started
    host, port = sock.getsockname()[:2]
    logging.basicConfig(level=logging.WARNING)
    interval = args.worker_interval
    if interval is None:
        interval = 0.0 if args.conformance_token else DEFAULT_WORKER_INTERVAL_S
    if interval > 0:
        worker.start(app.state.service, interval)
    config = uvicorn.Config(app, log_level="warning", access_log=False, backlog=BACKLOG)
    server = _Server(config, f"http://{host}:{port}")
    server.run(sockets=[sock])
    return 0 if server.started else 1


if __name__ == "__main__":
    sys.exit(main())
