#!/usr/bin/env python3
"""Seed corpora for the libFuzzer targets, generated from the conformance suites.

    python3 fuzz/make_corpus.py [--conformance DIR] [--json-patch DIR] [--out build/fuzz/corpus]

Writes <out>/fuzz_<target>/<sha1 of content> files. Nothing from the (read-only,
third-party) suites is copied into the repository; the seeds are derived at
build time. The JSON Patch suite comes from the npm package json-patch-test-suite
(node_modules/); the external conformance folder (SSE, RFC 8785, AG-UI apply
cases; --conformance, default $AGUI_CONFORMANCE_DIR) is optional: without it the
seeds come from the JSON Patch suite and the repository's own capture only.
Python 3 standard library only.

Input layouts (see the comment at the top of each fuzz/fuzz_*.cpp):
  fuzz_sse_framer  [limit byte][chunk seed] + SSE bytes
  fuzz_patch       doc JSON + NUL + patch JSON   (or a JSON array [doc, patch])
  fuzz_receiver    [opt0][opt1][chunk seed] + SSE bytes of AG-UI events
  fuzz_canonical   JSON text, or 8 raw bytes of an IEEE-754 double
  fuzz_json_reader JSON text
  fuzz_prompt_render [maxBytes][maxStringBytes][maxArrayItems][maxDepth][flags] + JSON state
  fuzz_edits       [opt0][opt1] + commands (feed, edit, agent acks, checkpoint, reload, restore)
"""
import argparse
import base64
import glob
import hashlib
import json
import os
import struct
import sys


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class Corpus:
    def __init__(self, root, name):
        self.dir = os.path.join(root, name)
        os.makedirs(self.dir, exist_ok=True)
        for old in glob.glob(os.path.join(self.dir, "*")):
            os.remove(old)
        self.count = 0

    def add(self, data):
        if isinstance(data, str):
            data = data.encode("utf-8")
        path = os.path.join(self.dir, hashlib.sha1(data).hexdigest())
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(data)
            self.count += 1


def load(conf, rel):
    with open(os.path.join(conf, rel), "rb") as f:
        return json.loads(f.read().decode("utf-8"))


def cases(doc):
    return doc["cases"] if isinstance(doc, dict) else doc


def sse_streams(conf):
    """Raw bytes of every SSE conformance case (chunks joined; the breaks only
    matter to a reconnect, which the fuzzers model themselves)."""
    for rel in ("sse/wpt_eventsource.json", "sse/eventsource_parser.json",
                "sse/launchdarkly_sse_contract_tests.json", "agui-apply/sse_transform_cases.json"):
        for case in cases(load(conf, rel)):
            chunks = case.get("chunks_b64")
            if chunks is None:
                chunks = [base64.b64encode(c.encode("utf-8")).decode() for c in case.get("chunks", [])]
            yield b"".join(base64.b64decode(c) for c in chunks)


def frame(event):
    return ("data: " + compact(event) + "\n\n").encode("utf-8")


def has_float(value):
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(has_float(v) for v in value)
    return False


def ascii_keys(value):
    if isinstance(value, dict):
        return all(k.isascii() for k in value) and all(ascii_keys(v) for v in value.values())
    if isinstance(value, list):
        return all(ascii_keys(v) for v in value)
    return True


def jcs_digest(state):
    """sha256 of RFC 8785 text, only for states where json.dumps equals JCS
    (integers, ASCII keys); None otherwise."""
    if has_float(state) or not ascii_keys(state):
        return None
    text = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def apply_patch(doc, ops):
    """Tiny RFC 6902 applier for building digests of the seed streams; returns
    None on anything unusual (the seed then simply carries no digest)."""
    import copy

    doc = copy.deepcopy(doc)

    def tokens(ptr):
        if ptr == "":
            return []
        return [t.replace("~1", "/").replace("~0", "~") for t in ptr.split("/")[1:]]

    def parent(d, toks):
        for t in toks[:-1]:
            d = d[int(t)] if isinstance(d, list) else d[t]
        return d

    try:
        for op in ops:
            kind, toks = op["op"], tokens(op["path"])
            if kind == "test":
                continue
            if not toks:
                if kind in ("add", "replace"):
                    doc = copy.deepcopy(op["value"])
                    continue
                return None
            p, last = parent(doc, toks), toks[-1]
            if kind in ("add", "replace", "copy", "move"):
                if kind in ("copy", "move"):
                    ft = tokens(op["from"])
                    fp = parent(doc, ft)
                    value = copy.deepcopy(fp[int(ft[-1])] if isinstance(fp, list) else fp[ft[-1]])
                    if kind == "move":
                        del fp[int(ft[-1]) if isinstance(fp, list) else ft[-1]]
                        p = parent(doc, toks)
                else:
                    value = copy.deepcopy(op["value"])
                if isinstance(p, list):
                    if kind == "replace":
                        p[int(last)] = value
                    else:
                        p.insert(len(p) if last == "-" else int(last), value)
                else:
                    p[last] = value
            elif kind == "remove":
                del p[int(last) if isinstance(p, list) else last]
        return doc
    except (KeyError, IndexError, ValueError, TypeError):
        return None


def agui_streams(conf):
    """AG-UI event sequences from the @ag-ui/client tests, as SSE streams:
    unsequenced (as the tests send them), sequenced via metadata, sequenced
    with digests, and with network faults (duplicate, swap, drop)."""
    out = []
    for rel in ("agui-apply/state_cases.json", "agui-apply/activity_cases.json") if conf else ():
        for case in cases(load(conf, rel)):
            events = case.get("events", [])
            initial = case.get("initial_state")
            plain = b""
            if initial is not None:
                plain += frame({"type": "STATE_SNAPSHOT", "snapshot": initial})
            plain += b"".join(frame(e) for e in events)
            out.append(plain)

            # Sequenced: a snapshot at seq 0, then every state event numbered.
            seq = 0
            state = initial if initial is not None else {}
            seq_events = [{"type": "STATE_SNAPSHOT", "snapshot": state, "metadata": {"seq": 0}}]
            for e in events:
                e = json.loads(json.dumps(e))
                if e.get("type") == "STATE_DELTA":
                    e["metadata"] = {"seq": seq + 1, "baseSeq": seq}
                    seq += 1
                    nxt = apply_patch(state, e.get("delta", []))
                    if nxt is not None:
                        state = nxt
                        digest = jcs_digest(state)
                        if digest:
                            e["metadata"]["digest"] = digest
                elif e.get("type") == "STATE_SNAPSHOT":
                    seq += 1
                    e["metadata"] = {"seq": seq, "epoch": "e1"}
                    state = e.get("snapshot", {})
                seq_events.append(e)
            frames = [frame(e) for e in seq_events]
            out.append(b"".join(frames))
            if len(frames) > 2:
                out.append(b"".join(frames[:2] + [frames[2], frames[1]] + frames[2:]))  # duplicate
                out.append(b"".join(frames[:1] + [frames[2], frames[1]] + frames[3:]))  # swap
                out.append(b"".join(frames[:1] + frames[2:]))  # drop -> gap
                out.append(b"".join(f.replace(b"\n", b"\r\n") for f in frames))  # CRLF
                out.append(b": ping\n\n" + b"id: 1\n".join(frames) + b"retry: 1000\n\n")
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conformance", default=os.environ.get("AGUI_CONFORMANCE_DIR") or None)
    ap.add_argument("--json-patch", default=os.path.join(repo, "node_modules", "json-patch-test-suite"))
    ap.add_argument("--out", default=os.path.join(repo, "build", "fuzz", "corpus"))
    args = ap.parse_args()
    conf = args.conformance if args.conformance and os.path.isdir(args.conformance) else None
    if not os.path.isdir(args.json_patch):
        sys.exit("make_corpus.py: no JSON Patch suite at %s (npm ci installs it)" % args.json_patch)
    if conf is None:
        print("make_corpus.py: no external conformance folder: seeds from the JSON Patch suite and the capture only")

    sse_raw = list(sse_streams(conf)) if conf else []
    agui = agui_streams(conf) if conf else []
    capture = os.path.join(repo, "tests", "vectors", "capture_gap.sse")
    if os.path.exists(capture):
        with open(capture, "rb") as f:
            agui.append(f.read())

    # --- fuzz_sse_framer: default limit, and a 32-byte limit that makes lines oversized.
    c = Corpus(args.out, "fuzz_sse_framer")
    for i, s in enumerate(sse_raw + agui):
        c.add(bytes([0xFF, i & 0xFF]) + s)
        c.add(bytes([0x20, (i * 7) & 0xFF]) + s)
    print("fuzz_sse_framer: %d seeds" % c.count)

    # --- fuzz_patch: json-patch-tests records and the AG-UI deltas.
    c = Corpus(args.out, "fuzz_patch")
    for rel in ("tests.json", "spec_tests.json"):
        for rec in load(args.json_patch, rel):
            if "doc" in rec and "patch" in rec:
                c.add(compact(rec["doc"]) + "\0" + compact(rec["patch"]))
                if "expected" in rec:
                    c.add(compact([rec["doc"], rec["patch"]]))
    for rel in ("agui-apply/state_cases.json", "agui-apply/activity_cases.json") if conf else ():
        for case in cases(load(conf, rel)):
            state = case.get("initial_state") or {}
            for e in case.get("events", []):
                if e.get("type") == "STATE_SNAPSHOT":
                    state = e.get("snapshot", {})
                for key in ("delta", "patch"):
                    if isinstance(e.get(key), list):
                        c.add(compact(state) + "\0" + compact(e[key]))
                        nxt = apply_patch(state, e[key])
                        if nxt is not None:
                            state = nxt
    print("fuzz_patch: %d seeds" % c.count)

    # --- fuzz_receiver: defaults, tight limits, and reconnects.
    c = Corpus(args.out, "fuzz_receiver")
    for i, s in enumerate(agui):
        c.add(bytes([0x00, 0x00, i & 0xFF]) + s)
        c.add(bytes([0x55, 0x15, (i * 13) & 0xFF]) + s)  # window 2, gap 2, 256 B events, depth 4, 256 B state
        c.add(bytes([0x00, 0x30, (i * 5) & 0xFF]) + s)   # reconnects
    for i, s in enumerate(sse_raw):
        c.add(bytes([0x00, 0x00, i & 0xFF]) + s)
    print("fuzz_receiver: %d seeds" % c.count)

    # --- fuzz_canonical: JCS inputs, patch documents, number bit patterns.
    c = Corpus(args.out, "fuzz_canonical")
    for path in sorted(glob.glob(os.path.join(conf, "jcs", "input", "*.json"))) if conf else []:
        with open(path, "rb") as f:
            c.add(f.read())
    for rel in ("tests.json", "spec_tests.json"):
        for rec in load(args.json_patch, rel):
            for key in ("doc", "expected"):
                if key in rec:
                    c.add(compact(rec[key]))
    lines = []
    if conf:
        with open(os.path.join(conf, "jcs", "numbers.csv"), encoding="utf-8") as f:
            lines = [line.strip() for line in f if "," in line]
    for i, line in enumerate(lines):
        bits, text = line.split(",", 1)
        if i % 50 == 0 or i < 40:
            c.add(struct.pack("<Q", int(bits, 16)))  # raw double
        if i % 250 == 0:
            c.add("[" + text + "]")
    print("fuzz_canonical: %d seeds" % c.count)

    # --- fuzz_json_reader: every JSON text above, plus whole AG-UI events.
    r = Corpus(args.out, "fuzz_json_reader")
    for name in sorted(os.listdir(c.dir)):
        with open(os.path.join(c.dir, name), "rb") as f:
            data = f.read()
        if len(data) != 8:  # raw doubles are not JSON text
            r.add(data)
    for s in agui:
        for line in s.split(b"\n"):
            if line.startswith(b"data:"):
                r.add(line[5:].strip())
    print("fuzz_json_reader: %d seeds" % r.count)

    # --- fuzz_prompt_render: the injection corpus under several headers (defaults;
    # datamark + untrusted root; tight limits with pointers; a small byte budget).
    c = Corpus(args.out, "fuzz_prompt_render")
    with open(os.path.join(repo, "tests", "vectors", "prompt_injection.json"), "rb") as f:
        injection = json.loads(f.read().decode("utf-8"))["cases"]
    headers = (bytes(5), bytes([0, 0, 0, 0, 0x05]), bytes([0, 7, 2, 2, 0x89]), bytes([40, 0, 0, 0, 0x5A]),
               bytes([12, 200, 3, 3, 0xFF]))
    for case in injection:
        for h in headers:
            c.add(h + compact(case["state"]).encode("utf-8"))
    print("fuzz_prompt_render: %d seeds" % c.count)

    # --- fuzz_edits: command scripts (see EditScript).
    c = Corpus(args.out, "fuzz_edits")
    for script in edit_scripts(agui):
        c.add(script)
    print("fuzz_edits: %d seeds" % c.count)

    # --- fuzz_run_life: a run's life in commands (see the layout at the top of fuzz/fuzz_run_life.cpp):
    # started, deltas, text, a cut and a resume, a grace timer, an end; under each mode.
    c = Corpus(args.out, "fuzz_run_life")
    lives = (
        bytes([1, 0, 1, 1, 1, 3, 1, 2, 3, 0, 2, 1, 3, 0x12, 4, 200, 9, 0]),   # resume after a cut, then the end
        bytes([1, 0, 1, 1, 3, 0, 4, 30, 4, 30, 4, 30]),                     # nobody comes back: abandoned
        bytes([1, 0, 6, 1, 1, 1, 6, 2, 7, 1, 0, 9, 1]),                       # a stored log: commits, lost
        bytes([2, 3, 1, 2, 7, 0, 2, 1, 0, 2, 0, 4, 3, 1]),                    # an attach waiting for RUN_STARTED
        bytes([0, 8, 1, 8, 0, 10, 5]) + b'{"on"' + bytes([0, 24]) + b"data: {\"type\":\"RUN_STARTED\"}\n\n",
    )
    for mode in (0, 1, 2, 4):
        for life in lives:
            c.add(bytes([mode]) + life[1:])
    print("fuzz_run_life: %d seeds" % c.count)


class EditScript:
    """Commands of fuzz/fuzz_edits.cpp (see the layout at the top of that file)."""

    def __init__(self, opt0=0, opt1=0):
        self.data = bytearray([opt0, opt1])

    def feed(self, sse, how=1):
        """Raw SSE bytes (cut into <= 255-byte feeds). how: bit 0 SyncEngine::feed,
        else the facade (bit 1 feedInput), the rest picks where a chunk is cut."""
        if isinstance(sse, str):
            sse = sse.encode("utf-8")
        for at in range(0, len(sse), 255):
            part = sse[at:at + 255]
            self.data += bytes([0, len(part)]) + part + bytes([how])
        return self

    def event(self, event, how=1):
        return self.feed(frame(event), how)

    def edit(self, ops):
        text = compact(ops).encode("utf-8")
        assert len(text) < 256
        self.data += bytes([5, 1, len(text)]) + text
        return self

    def agent_takes(self, count, refuse=(), snapshot=False, how=0):
        """The agent judges the `count` oldest pending edits (at most 4): ack each."""
        b = (count - 1) | (0x80 if snapshot else 0)
        self.data += bytes([3, b]) + bytes(3 if i in refuse else 0 for i in range(count)) + bytes([0, how])
        return self

    def round_trip(self):
        self.data += bytes([6])
        return self

    def reload(self, carry_on=True):
        self.data += bytes([7, 1 if carry_on else 0])
        return self

    def restore(self, text):
        if not isinstance(text, bytes):
            text = (text if isinstance(text, str) else compact(text)).encode("utf-8")
        assert len(text) < 1024
        self.data += bytes([8, len(text) & 0xFF, len(text) >> 8]) + text
        return self

    def end(self):
        self.data += bytes([10])
        return self

    def reset(self):
        self.data += bytes([130])  # 130 % 12 == 10, high bit: reset()
        return self

    def heartbeat_at_last_seq(self, how=0):
        self.data += bytes([11, 0, how])
        return self

    def bytes(self):
        return bytes(self.data)


def edit_scripts(agui):
    """Seeds for fuzz_edits: the edit life cycle (acked, rejected, conflicting,
    masked, stale), checkpoints and reloads, hostile restores, and the AG-UI
    streams with an edit on top. The state's keys are the harness's pools:
    /a (agent-owned under ownership 1-3), /u (user-owned under 2-3), /s, /l."""
    state = {"a": {"x": 1}, "u": {"n": "hi"}, "s": {"x": 10}, "l": [1, 2]}

    def snap(seq, snapshot=None, **meta):
        return {"type": "STATE_SNAPSHOT", "snapshot": state if snapshot is None else snapshot,
                "metadata": dict({"seq": seq}, **meta)}

    def delta(seq, ops, **meta):
        return {"type": "STATE_DELTA", "delta": ops, "metadata": dict({"seq": seq, "baseSeq": seq - 1}, **meta)}

    def replace(path, value):
        return {"op": "replace", "path": path, "value": value}

    out = []
    # opt1: ownership (bits 0-1), user-wins (bit 2); clientId "tab" (bits 3-4 = 0).
    for opt0, opt1 in ((0x00, 0x00), (0x00, 0x02), (0x00, 0x06), (0x55, 0x03)):
        # Acked, then a conflict with the agent on a shared path, then a reload.
        out.append(EditScript(opt0, opt1).event(snap(1)).edit([replace("/s/x", 11)]).agent_takes(1)
                   .edit([replace("/s/x", 12)]).event(delta(3, [replace("/s/x", 13)]))
                   .edit([replace("/u/n", "mine")]).event(delta(4, [replace("/u/n", "theirs")]), how=0)
                   .round_trip().reload().bytes())
        # Refused edits (agent-owned, failed test, bad op, nothing) change nothing.
        out.append(EditScript(opt0, opt1).event(snap(1)).edit([replace("/a/x", 2)])
                   .edit([{"op": "test", "path": "/s/x", "value": 99}, replace("/s/x", 1)])
                   .edit([{"op": "frob", "path": "/s"}]).edit([]).edit([{"op": "remove", "path": "/nope"}])
                   .round_trip().bytes())
        # Acks as the emitter sends them: applied, rejected (with a reason), a late
        # one in a snapshot, one for an unknown edit, a malformed entry.
        out.append(EditScript(opt0, opt1).event(snap(1)).edit([{"op": "add", "path": "/l/-", "value": 3}])
                   .edit([replace("/s/x", 20)]).edit([{"op": "remove", "path": "/u/n"}])
                   .event(delta(2, [{"op": "add", "path": "/l/-", "value": 3}], acks=[
                       {"editId": "tab:1", "status": "applied"},
                       {"editId": "tab:2", "status": "rejected", "reason": "conflict"},
                       {"editId": "zz:1", "status": "applied"}, 7]))
                   .event(snap(3, dict(state, l=[1, 2, 3]), acks=[{"editId": "tab:3", "status": "rejected",
                                                                   "reason": "agent-owned", "seq": 3}]), how=2)
                   .round_trip().bytes())
        # An edit that stops applying (the agent removed what it tests), a later
        # edit, then checkpoints and a reload.
        out.append(EditScript(opt0, opt1).event(snap(1, {"l": [], "x": 1}))
                   .edit([{"op": "test", "path": "/x", "value": 1}, {"op": "add", "path": "/l/0", "value": "e1"}])
                   .event(delta(2, [{"op": "remove", "path": "/x"}]))
                   .edit([{"op": "add", "path": "/x", "value": 1}, {"op": "add", "path": "/l/0", "value": "e2"}])
                   .round_trip().reload().event(delta(3, [{"op": "add", "path": "/y", "value": 2}]))
                   .bytes())
        # A reload whose catch-up is a heartbeat at lastSeq, then a replay, a gap, an end.
        out.append(EditScript(opt0, opt1).event(snap(1, epoch="e1")).edit([replace("/s/x", 5)]).reload()
                   .heartbeat_at_last_seq().event(delta(2, [replace("/l/0", 9)], epoch="e1"))
                   .event(delta(4, [replace("/l/1", 9)])).end().reset().round_trip().bytes())
        # Hostile restores: well formed, torn, wrong types, over the limits, odd edits.
        good = {"state": state, "lastSeq": 4, "epoch": "e1", "lastEventId": "7", "clientId": "tab",
                "editCounter": 2, "edits": [{"editId": "tab:1", "baseSeq": 3, "ops": [replace("/s/x", 1)]},
                                            {"editId": "tab:2", "baseSeq": None, "ops": [replace("/a/x", 1)]}]}
        script = EditScript(opt0, opt1).event(snap(1)).edit([replace("/s/x", 3)])
        for text in (good, compact(good)[:60], dict(good, lastSeq=-1), dict(good, edits=7),
                     dict(good, state=[[[[[[[[[[]]]]]]]]]]), dict(good, editCounter=9007199254740991),
                     dict(good, edits=[{"editId": "tab:1", "ops": "nope"}, {"editId": "tab:1", "ops": []}]),
                     dict(good, clientId="", lastEventId=""), "null", "{\"state\":{}}\u0000"):
            script.restore(text)
        out.append(script.edit([replace("/s/x", 4)]).round_trip().bytes())
    # The AG-UI streams (and the repository's capture) with edits on top.
    for i, stream in enumerate(agui[:40]):
        out.append(EditScript(0, 0).feed(stream[:2000], how=i & 3).edit([{"op": "add", "path": "/x", "value": i}])
                   .round_trip().reload().bytes())
    return out


if __name__ == "__main__":
    main()
