"""`python -m practice_model --port 8765`: run the practice model until Ctrl-C."""
from __future__ import annotations

import argparse
import signal
import sys
import threading

from .server import PracticeServer


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, start the server, print its URL, serve until Ctrl-C (or SIGTERM)."""
    parser = argparse.ArgumentParser(prog="python -m practice_model",
                                     description="A local, deterministic, OpenAI-compatible practice model.")
    parser.add_argument("--port", type=int, default=8765, help="port to listen on (0: any free port)")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--api-key", default=None, help="require this key as `Authorization: Bearer ...`")
    parser.add_argument("--log", default=None, metavar="FILE", help="append every exchange to FILE (JSONL)")
    args = parser.parse_args(argv)
    try:
        server = PracticeServer(host=args.host, port=args.port, api_key=args.api_key, log_path=args.log).start()
    except OSError as exc:
        print(f"Could not listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"Practice model listening on {server.base_url} (models: {', '.join(server.personas)})", flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())  # `kill` stops it as cleanly as Ctrl-C
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
