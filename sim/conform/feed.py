"""The external feed: a separate process, an HTTP server on a free loopback port, with its
posts in its own SQLite file. `python PATH/TO/feed.py DB PORTFILE` (a script: it imports nothing of `sim`).

POST /post {"text", "key"}: with a key it has seen, it applies nothing and answers with the
post it applied for that key (a different text under a known key is refused, as the model's
feed does, docs/model.md §2); with a new key or no key it applies the post, commits, and
answers. Each request is handled as one unit (one thread, one SQLite transaction).
GET /posts: every applied post, in order.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any


class Feed(BaseHTTPRequestHandler):
    db: sqlite3.Connection

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's name)
        return

    def reply(self, document: Any) -> None:
        data = json.dumps(document).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        posts = [{"post": f"P{n}", "key": k, "text": t, "by": b}
                 for n, k, t, b in self.db.execute("SELECT n, key, text, sender FROM posts ORDER BY n")]
        self.reply({"posts": posts, "repeats": self.db.execute("SELECT COUNT(*) FROM repeats").fetchone()[0]})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        key, text, sender = body.get("key"), body["text"], body.get("by")
        with self.db:
            if key is not None:
                known = self.db.execute("SELECT n, text FROM posts WHERE key = ?", (key,)).fetchone()
                if known is not None:
                    self.db.execute("INSERT INTO repeats (key, text) VALUES (?, ?)", (key, text))
                    answer = "repeat" if known[1] == text else "refused"
                    self.reply({"post": f"P{known[0]}", "answer": answer})
                    return
            n = self.db.execute("INSERT INTO posts (key, text, sender) VALUES (?, ?, ?)", (key, text, sender)).lastrowid
        self.reply({"post": f"P{n}", "answer": "applied"})


def main(argv: list[str]) -> None:
    db_path, port_file = Path(argv[0]), Path(argv[1])
    db = sqlite3.connect(db_path, check_same_thread=False)
    db.executescript(
        "CREATE TABLE IF NOT EXISTS posts (n INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT, text TEXT, sender TEXT);"
        "CREATE TABLE IF NOT EXISTS repeats (n INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT, text TEXT);"
    )
    Feed.db = db
    server = HTTPServer(("127.0.0.1", 0), Feed)
    tmp = port_file.with_suffix(".tmp")
    tmp.write_text(str(server.server_address[1]))
    tmp.rename(port_file)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
