#!/usr/bin/env python3
"""A fake model provider for tests: a real HTTP server on 127.0.0.1 that answers OpenAI Chat
Completions, OpenAI Responses and Anthropic Messages requests, streamed or not, from a script of
replies and faults, and records every request it received. See README.md beside this file."""

import argparse
import hashlib
import json
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ENDPOINTS = {"/chat/completions": "chat", "/responses": "responses", "/messages": "anthropic"}
FAULTS = {"status", "reset", "cut", "stall", "malformed", "empty"}


class Script:
    """The replies, consumed in order by every model request whatever its protocol."""

    def __init__(self):
        self.lock = threading.Lock()
        self.load({"replies": []})

    def load(self, doc):
        replies = doc.get("replies", [])
        if not isinstance(replies, list):
            raise ValueError("'replies' must be a list")
        queue = []
        for i, r in enumerate(replies):
            if not isinstance(r, dict):
                raise ValueError(f"reply {i} must be an object")
            if "fault" in r and r["fault"] not in FAULTS:
                raise ValueError(f"reply {i}: unknown fault {r['fault']!r}; one of {sorted(FAULTS)}")
            queue.extend([r] * int(r.get("count", 1)))
        with self.lock:
            self.queue = queue
            self.served = 0
            self.requests = []

    def next(self, record):
        with self.lock:
            self.requests.append(record)
            if self.served >= len(self.queue):
                return None
            r = self.queue[self.served]
            self.served += 1
            return r


SCRIPT = Script()


def usage_of(reply):
    u = {"input": 10, "output": 5, "cached_input": 0, "cache_write": 0, "reasoning": 0}
    u.update(reply.get("usage", {}))
    return u


def calls_of(reply):
    out = []
    for i, c in enumerate(reply.get("tool_calls", [])):
        args = c["arguments_raw"] if "arguments_raw" in c else json.dumps(c.get("arguments", {}))
        out.append({"id": c.get("id", f"call_{i}"), "name": c["name"], "args": args})
    return out


def pieces(text, n=3):
    """Splits text into up to n deltas, so that clients must assemble them."""
    if not text:
        return []
    step = max(1, -(-len(text) // n))
    return [text[i:i + step] for i in range(0, len(text), step)]


# --- OpenAI Chat Completions -------------------------------------------------------------------

def chat_finish(reply):
    return reply.get("finish") or ("tool_calls" if reply.get("tool_calls") else "stop")


def chat_usage(u):
    return {"prompt_tokens": u["input"], "completion_tokens": u["output"],
            "total_tokens": u["input"] + u["output"],
            "prompt_tokens_details": {"cached_tokens": u["cached_input"]},
            "completion_tokens_details": {"reasoning_tokens": u["reasoning"]}}


def chat_whole(reply, model):
    msg = {"role": "assistant", "content": reply.get("text", "") or None}
    if reply.get("reasoning"):
        msg["reasoning_content"] = reply["reasoning"]
    calls = calls_of(reply)
    if calls:
        msg["tool_calls"] = [{"id": c["id"], "type": "function",
                              "function": {"name": c["name"], "arguments": c["args"]}} for c in calls]
    choices = [] if reply.get("fault") == "empty" else [
        {"index": 0, "message": msg, "finish_reason": chat_finish(reply)}]
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": choices, "usage": chat_usage(usage_of(reply))}


def chat_events(reply, model):
    def chunk(delta, finish=None):
        return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if reply.get("fault") == "empty":
        return [(None, {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model, "choices": []}),
                (None, "[DONE]")]
    ev = [chunk({"role": "assistant", "content": ""})]
    ev += [chunk({"reasoning_content": p}) for p in pieces(reply.get("reasoning", ""))]
    ev += [chunk({"content": p}) for p in pieces(reply.get("text", ""))]
    for i, c in enumerate(calls_of(reply)):
        ev.append(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                         "function": {"name": c["name"], "arguments": ""}}]}))
        ev += [chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]}) for p in pieces(c["args"], 2)]
    ev.append(chunk({}, chat_finish(reply)))
    ev.append({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model, "choices": [],
               "usage": chat_usage(usage_of(reply))})
    return [(None, e) for e in ev] + [(None, "[DONE]")]


# --- OpenAI Responses --------------------------------------------------------------------------

def responses_whole(reply, model):
    out = []
    if reply.get("reasoning"):
        out.append({"type": "reasoning", "id": "rs_fake", "encrypted_content": "enc:" + reply["reasoning"],
                    "summary": [{"type": "summary_text", "text": reply["reasoning"]}]})
    if reply.get("text"):
        out.append({"type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": reply["text"], "annotations": []}]})
    for c in calls_of(reply):
        out.append({"type": "function_call", "id": "fc_" + c["id"], "call_id": c["id"], "name": c["name"],
                    "arguments": c["args"], "status": "completed"})
    u = usage_of(reply)
    finish = reply.get("finish")
    status = "incomplete" if finish == "length" else "completed"
    doc = {"id": "resp_fake", "object": "response", "status": status, "model": model,
           "output": out,
           "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
           "usage": {"input_tokens": u["input"], "input_tokens_details": {"cached_tokens": u["cached_input"]},
                     "output_tokens": u["output"], "output_tokens_details": {"reasoning_tokens": u["reasoning"]},
                     "total_tokens": u["input"] + u["output"]}}
    if reply.get("fault") == "empty":
        del doc["output"]
    return doc


def responses_events(reply, model):
    whole = responses_whole(reply, model)
    if reply.get("fault") == "empty":
        return [("response.completed", {"type": "response.completed", "response": {"status": "completed"}})]
    ev = [("response.created", {"type": "response.created",
                                "response": dict(whole, status="in_progress", output=[])})]
    for i, item in enumerate(whole["output"]):
        start = dict(item)
        if item["type"] == "message":
            start["content"] = []
        if item["type"] == "function_call":
            start["arguments"] = ""
        ev.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                  "item": start}))
        if item["type"] == "message":
            for p in pieces(item["content"][0]["text"]):
                ev.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                          "output_index": i, "content_index": 0, "delta": p}))
        if item["type"] == "function_call":
            for p in pieces(item["arguments"], 2):
                ev.append(("response.function_call_arguments.delta",
                           {"type": "response.function_call_arguments.delta", "item_id": item["id"],
                            "output_index": i, "delta": p}))
        ev.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": i,
                                                 "item": item}))
    final = "response.incomplete" if whole["status"] == "incomplete" else "response.completed"
    ev.append((final, {"type": final, "response": whole}))
    return ev


# --- Anthropic Messages ------------------------------------------------------------------------

def anthropic_stop(reply):
    f = reply.get("finish")
    if f == "length":
        return "max_tokens"
    if f:
        return f
    return "tool_use" if reply.get("tool_calls") else "end_turn"


def anthropic_usage(u):
    return {"input_tokens": u["input"] - u["cached_input"] - u["cache_write"],
            "cache_read_input_tokens": u["cached_input"], "cache_creation_input_tokens": u["cache_write"],
            "output_tokens": u["output"]}


def anthropic_blocks(reply):
    blocks = []
    if reply.get("reasoning"):
        blocks.append({"type": "thinking", "thinking": reply["reasoning"], "signature": "sig:" + reply["reasoning"]})
    if reply.get("text"):
        blocks.append({"type": "text", "text": reply["text"]})
    for c in calls_of(reply):
        try:
            args = json.loads(c["args"])
        except ValueError:
            args = c["args"]  # the wire cannot carry broken JSON here; a string stands for it
        blocks.append({"type": "tool_use", "id": c["id"], "name": c["name"], "input": args, "_raw": c["args"]})
    return blocks


def anthropic_whole(reply, model):
    blocks = [{k: v for k, v in b.items() if k != "_raw"} for b in anthropic_blocks(reply)]
    doc = {"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": blocks,
           "stop_reason": anthropic_stop(reply), "stop_sequence": None,
           "usage": anthropic_usage(usage_of(reply))}
    if reply.get("fault") == "empty":
        del doc["content"]
    return doc


def anthropic_events(reply, model):
    u = anthropic_usage(usage_of(reply))
    if reply.get("fault") == "empty":  # a message that never says why it stopped, and holds nothing
        return [("message_start", {"type": "message_start", "message": {"id": "msg_fake", "type": "message",
                                                                        "role": "assistant", "model": model}}),
                ("message_stop", {"type": "message_stop"})]
    start_usage = dict(u, output_tokens=1)
    ev = [("message_start", {"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "usage": start_usage}}), ("ping", {"type": "ping"})]
    for i, b in enumerate(anthropic_blocks(reply)):
        if b["type"] == "thinking":
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": {"type": "thinking", "thinking": ""}}))
            ev += [("content_block_delta", {"type": "content_block_delta", "index": i,
                                            "delta": {"type": "thinking_delta", "thinking": p}})
                   for p in pieces(b["thinking"])]
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                               "delta": {"type": "signature_delta", "signature": b["signature"]}}))
        elif b["type"] == "text":
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": {"type": "text", "text": ""}}))
            ev += [("content_block_delta", {"type": "content_block_delta", "index": i,
                                            "delta": {"type": "text_delta", "text": p}}) for p in pieces(b["text"])]
        else:
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"],
                                                                 "input": {}}}))
            ev += [("content_block_delta", {"type": "content_block_delta", "index": i,
                                            "delta": {"type": "input_json_delta", "partial_json": p}})
                   for p in pieces(b["_raw"], 2)]
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    ev.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": anthropic_stop(reply)},
                                 "usage": {"output_tokens": u["output_tokens"]}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    return ev


RENDER = {"chat": (chat_whole, chat_events), "responses": (responses_whole, responses_events),
          "anthropic": (anthropic_whole, anthropic_events)}


def error_body(kind, status, message):
    if kind == "anthropic":
        names = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                 404: "not_found_error", 429: "rate_limit_error", 529: "overloaded_error"}
        return {"type": "error", "error": {"type": names.get(status, "api_error"), "message": message}}
    return {"error": {"message": message, "type": "fake_error", "code": status}}


class Handler(BaseHTTPRequestHandler):
    server_version = "fake-provider/1"

    def log_message(self, fmt, *args):  # keep test output quiet
        pass

    def finish(self):
        try:
            super().finish()
        except OSError:
            pass  # the socket was reset on purpose

    def send_json(self, status, doc, headers=None):
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        self.wfile.write(data)

    def reset(self):
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def do_GET(self):
        if self.path == "/_fake/requests":
            with SCRIPT.lock:
                self.send_json(200, {"requests": SCRIPT.requests, "served": SCRIPT.served,
                                     "scripted": len(SCRIPT.queue)})
        elif self.path == "/_fake/health":
            self.send_json(200, {"ok": True})
        else:
            self.send_json(404, {"error": {"message": f"no such path {self.path}"}})

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/_fake/script":
            try:
                SCRIPT.load(json.loads(raw))
            except (ValueError, KeyError, TypeError) as e:
                self.send_json(400, {"error": {"message": f"bad script: {e}"}})
                return
            self.send_json(200, {"ok": True, "replies": len(SCRIPT.queue)})
            return
        if self.path == "/_fake/sha256":
            text = json.loads(raw).get("text", "")
            self.send_json(200, {"sha256": hashlib.sha256(text.encode()).hexdigest()})
            return
        kind = next((k for suffix, k in ENDPOINTS.items() if self.path.endswith(suffix)), None)
        if kind is None:
            self.send_json(404, error_body("chat", 404, f"fake provider: no endpoint {self.path}"))
            return
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode(errors="replace")
        key = self.headers.get("x-api-key") or ""
        auth = self.headers.get("Authorization") or ""
        scheme = "x-api-key" if key else ("bearer" if auth.lower().startswith("bearer ") else None)
        if scheme == "bearer":
            key = auth[7:]
        record = {"path": self.path, "protocol": kind, "body": body, "time": time.time(),
                  "auth": {"scheme": scheme, "sha256": hashlib.sha256(key.encode()).hexdigest() if scheme else None},
                  "headers": {k.lower(): v for k, v in self.headers.items()
                              if k.lower() not in ("authorization", "x-api-key")}}
        reply = SCRIPT.next(record)
        if reply is None:
            self.send_json(400, error_body(kind, 400, "fake provider: no scripted reply left"))
            return
        if reply.get("delay_s"):
            time.sleep(float(reply["delay_s"]))
        try:
            self.answer(kind, reply, body if isinstance(body, dict) else {}, key)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (an idle timeout under test)

    def answer(self, kind, reply, body, key):
        fault = reply.get("fault")
        model = reply.get("model", body.get("model", "fake-model"))
        if fault == "status":
            status = int(reply.get("status", 500))
            message = reply.get("message", f"fake provider: scripted HTTP {status}").replace("{key}", key)
            headers = dict(reply.get("headers", {}))
            if "retry_after" in reply:
                headers["Retry-After"] = reply["retry_after"]
            self.send_json(status, error_body(kind, status, message), headers)
            return
        whole, events = RENDER[kind]
        if body.get("stream"):
            self.stream(events(reply, model), fault, reply)
            return
        data = b"{not json at all" if fault == "malformed" else json.dumps(whole(reply, model)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        extra = 1000 if fault in ("cut", "reset", "stall") else 0
        self.send_header("Content-Length", str(len(data) + extra))
        self.end_headers()
        if fault in ("cut", "reset", "stall"):
            self.wfile.write(data[:len(data) // 2])
            self.wfile.flush()
            if fault == "stall":
                time.sleep(float(reply.get("stall_s", 5)))
            if fault == "reset":
                self.reset()
            self.close_connection = True
            return
        self.wfile.write(data)

    def stream(self, events, fault, reply):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        half = max(1, len(events) // 2)
        for i, (name, data) in enumerate(events):
            if fault in ("cut", "reset", "stall") and i == half:
                self.wfile.flush()
                if fault == "stall":
                    time.sleep(float(reply.get("stall_s", 5)))
                if fault == "reset":
                    self.reset()
                return
            text = data if isinstance(data, str) else json.dumps(data)
            if fault == "malformed" and i == half:
                text = "{this is not json"
            frame = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
            self.wfile.write(frame.encode())
            self.wfile.flush()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--script", help="JSON script file of replies (README.md); POST /_fake/script replaces it")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    ap.add_argument("--exit-on-stdin-eof", action="store_true",
                    help="stop when standard input closes (the launching test died or finished)")
    args = ap.parse_args()
    if args.script:
        with open(args.script) as f:
            SCRIPT.load(json.load(f))
    server = Server(("127.0.0.1", args.port), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    # Exit when the parent closes our stdin (tests that die do not leave servers behind).
    def watch_stdin():
        try:
            sys.stdin.read()
        finally:
            server.shutdown()
    if args.exit_on_stdin_eof:
        threading.Thread(target=watch_stdin, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
