#!/usr/bin/env python3
"""tests/corpus/gen-gio-rules.py - writes the generated block of synchronous
GIO calls in rules/packs/glib.rules from GIO's installed headers.

Invariants: only the lines between the two marker comments of glib.rules are
ever rewritten; a function that any pack names outside that block keeps its
hand-written rule and is left out here (a function has one blocking rule);
the output is sorted, so the same headers give the same block byte for byte.

A function is listed when its prototype in gio/*.h ends in _sync, or takes a
GCancellable, and it is not asynchronous (no GAsyncReadyCallback parameter,
no _async/_finish suffix) and not one of the EXCLUDED kinds below, which take
a GCancellable without waiting for anything. A gboolean parameter named
`blocking` and a gint64 `timeout` become unless= conditions (FALSE, 0: the
call does not wait), and so does a GSocket in non-blocking mode for the
socket calls that honour it (SOCKET_MODE), the socket a readiness callback
was called for, for the receives that take the mode (SOCKET_READY), a
stream that never waits (a memory stream) for the stream calls
(STREAM_MODE), and a stream whose close is close(2) of its descriptor for
the closes (CLOSE_MADE_BY).

usage: gen-gio-rules.py [--check] [GIO_INCLUDE_DIR]
       (default /usr/include/glib-2.0/gio; --check exits 1 when the block
       in glib.rules differs from what the headers give, and changes nothing)
"""

import glob
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PACKS = os.path.join(ROOT, "rules", "packs")
TARGET = os.path.join(PACKS, "glib.rules")
BEGIN = "# ---- generated: synchronous GIO (tests/corpus/gen-gio-rules.py) ----"
END = "# ---- end generated ----"

# GSocket calls that wait only in the socket's blocking mode (gsocket.c
# tests socket->priv->blocking in each): not after g_socket_set_blocking
# (socket, FALSE), nor in the socket's own readiness callback. The _with_
# forms take the mode (or a timeout) as an argument instead: they wait,
# whatever the socket's mode, only when recv says EWOULDBLOCK, which a
# receive on the socket its readiness callback was called for does not
# (SOCKET_READY: "arg0 is ready"). Sends are left out: blockscan does not
# know the condition a source watches, and a send in a G_IO_IN callback
# (an echo) may find the peer's buffer full.
SOCKET_READY = re.compile(r"^g_socket_receive\w*_with_(blocking|timeout)$")
SOCKET_MODE = {
    "g_socket_accept", "g_socket_connect", "g_socket_receive", "g_socket_receive_from",
    "g_socket_receive_message", "g_socket_receive_messages", "g_socket_send",
    "g_socket_send_message", "g_socket_send_messages", "g_socket_send_to",
}

# The calls on a GInputStream or GOutputStream itself: they never wait on a
# stream that never does (a memory stream, whose constructors are
# nonblocking: rules of the hand-written part). A splice also reads its
# source stream, which may wait.
STREAM_MODE = re.compile(r"^g_(input|output)_stream_")
STREAM_SPLICE = "g_output_stream_splice"

# Closing a stream of these kinds is close(2) of its descriptor (gunix*
# stream.c: no buffer to flush, close_fn closes the fd), which blockscan
# does not count as blocking; reads and writes on them still wait.
CLOSE_MADE_BY = {
    "g_input_stream_close": "g_unix_input_stream_new",
    "g_output_stream_close": "g_unix_output_stream_new",
}

# Prefixes and parts of names that take a GCancellable but never wait: the
# cancellable itself, task and async-result plumbing, sources and monitors
# (they are created, not waited on), explicitly non-blocking reads/writes.
# g_initable_* only dispatch to a class's init, whose own waits (a D-Bus
# Hello, a nested loop) are rules: a rule on the dispatcher would stop the
# walk there and, in GLib itself, hide those real waits behind it.
EXCLUDED = (
    re.compile(r"^g_(cancellable|task|simple_async|async_initable|initable|io_scheduler)_"),
    re.compile(r"nonblocking|_source_new|create_source$|^g_file_monitor"),
)


def strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)


def prototypes(text):
    """Yields (name, [parameter strings]) for every function declared."""
    for m in re.finditer(r"\b(g_[a-z0-9_]+)\s*\(", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        rest = text[i:i + 200].lstrip()
        rest = re.sub(r"^(G_GNUC_\w+|G_DEPRECATED\w*|GIO_DEPRECATED\w*)(\s*\([^)]*\))?\s*", "", rest)
        if rest.startswith(";"):
            params = [p.strip() for p in text[m.end():i - 1].split(",")]
            yield m.group(1), params


def category(name):
    # Finding and connecting a bus's transport (a socket connect, a nonce
    # file read) is I/O, which an offload pool is for; a call that waits
    # for a reply from the bus is sync-over-async, reported everywhere.
    if name.startswith("g_dbus_address_"):
        return "io"
    if re.search(r"dbus|^g_bus_|^g_application_register$", name):
        return "sync-over-async"
    if re.search(r"resolver|address_enumerator", name):
        return "dns"
    if name.startswith("g_subprocess_"):
        return "process"
    return "io"


def hand_written():
    """Names with a blocking rule outside the generated block, in any pack."""
    names = set()
    for path in glob.glob(os.path.join(PACKS, "*.rules")):
        inside = False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith(BEGIN):
                    inside = True
                elif line.startswith(END):
                    inside = False
                elif not inside and line.startswith("blocking:"):
                    names.add(line.split()[0][len("blocking:"):])
    return names


def gio_version(include_dir):
    try:
        out = subprocess.run(["pkg-config", "--modversion", "gio-2.0"], capture_output=True,
                             text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "of " + os.path.basename(os.path.dirname(include_dir.rstrip("/")))


def block(include_dir):
    decls = {}
    for path in sorted(glob.glob(os.path.join(include_dir, "*.h"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            for name, params in prototypes(strip(f.read())):
                decls.setdefault(name, params)
    if not decls:
        sys.exit(f"gen-gio-rules: no prototypes under {include_dir} (is libglib2.0-dev installed?)")
    skip = hand_written()
    lines = []
    for name in sorted(decls):
        params = decls[name]
        joined = " ".join(params)
        if not (name.endswith("_sync") or "GCancellable" in joined):
            continue
        if ("GAsyncReadyCallback" in joined or name.endswith(("_async", "_finish"))
                or any(x.search(name) for x in EXCLUDED) or name in skip):
            continue
        line = f"blocking:{name} category={category(name)}"
        base = name[:-len("_sync")] if name.endswith("_sync") else name
        for candidate in (base, base + "_async"):
            if candidate != name and "GAsyncReadyCallback" in " ".join(decls.get(candidate, [])):
                line += f' hint="use {candidate}() and finish in its GAsyncReadyCallback"'
                break
        for index, param in enumerate(params):
            if re.fullmatch(r"gboolean\s+blocking", param):
                line += f' unless="arg{index} is FALSE=0"'
            elif re.fullmatch(r"gint64\s+timeout(_us)?", param):
                line += f' unless="arg{index} is 0"'
        if SOCKET_READY.match(name) and re.fullmatch(r"GSocket\s*\*\s*socket", params[0]):
            line += ' unless="arg0 is ready"'
        if name in SOCKET_MODE and re.fullmatch(r"GSocket\s*\*\s*socket", params[0]):
            line += ' unless="arg0 is nonblocking-object"'
        elif (STREAM_MODE.match(name) and not name.startswith(STREAM_SPLICE)
              and re.fullmatch(r"G(Input|Output)Stream\s*\*\s*stream", params[0])):
            line += ' unless="arg0 is nonblocking-object"'
        if name in CLOSE_MADE_BY:
            line += f' unless="arg0 is made-by {CLOSE_MADE_BY[name]}"'
        lines.append(line)
    head = [BEGIN,
            f"# {len(lines)} functions from GIO {gio_version(include_dir)}'s headers; regenerate after a",
            "# GLib upgrade with tests/corpus/gen-gio-rules.py (--check says whether it is due)."]
    return "\n".join(head + lines + [END]) + "\n"


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    if len(args) > 1 or any(a.startswith("-") for a in args):
        sys.stderr.write(__doc__)
        sys.exit(2)
    include_dir = args[0] if args else "/usr/include/glib-2.0/gio"
    with open(TARGET, encoding="utf-8") as f:
        text = f.read()
    new = block(include_dir)
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        sys.exit(f"gen-gio-rules: {TARGET} has no '{BEGIN}' ... '{END}' block")
    updated = text[:start] + new + text[end + len(END) + 1:]
    if check:
        if updated != text:
            print("gen-gio-rules: glib.rules' generated block is out of date", file=sys.stderr)
            sys.exit(1)
        return
    with open(TARGET, "w", encoding="utf-8") as f:
        f.write(updated)
    print(f"gen-gio-rules: {new.count(chr(10)) - 4} rules written to rules/packs/glib.rules")


if __name__ == "__main__":
    main(sys.argv[1:])
