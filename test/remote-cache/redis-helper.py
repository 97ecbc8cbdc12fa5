#!/usr/bin/env python3
"""Test fixture for the fleet cache (README "Fleet cache (Redis)"): starts and
stops a private redis-server, talks RESP to it, and stands in for servers that
misbehave. Every process it leaves in the background has a watchdog (it exits
by itself after --lifetime seconds) so a failing test cannot leak one.

  start DIR [--lifetime S] [-- EXTRA REDIS ARGS]  redis-server on a free
      loopback port, files in DIR (DIR/port, DIR/pid); prints the port
  stop DIR                          stops what start (or proxy/fake) left in DIR
  cmd PORT ARG...                   one command; prints the reply (repr)
  put PORT KEY FILE                 SET KEY to FILE's bytes
  count PORT PATTERN                prints how many keys match
  flip PORT PATTERN OFFSET          flips the low bit of the byte at OFFSET
      (negative: from the end) of every value matching PATTERN, expiry kept;
      prints how many values it changed
  plant PORT --winner NAME          rewrites every stored record to name
      another winner (checksum recomputed, expiry kept): a well-formed record
      that lies
  plant-file FILE... --winner NAME  the same for record files on disk
  proxy DIR --to PORT (--delay-ms N | --kill-after N --kill-pid PID)
      a TCP proxy in front of PORT, port in DIR/proxy.port: delays every
      reply, or forwards N commands and then SIGKILLs the server (it dies
      mid-run) and stops listening
  fleet N PREFIX -- COMMAND...      runs N copies of COMMAND at once ("{i}" in
      an argument becomes 1..N), stdout to PREFIX.{i}.out, stderr to
      PREFIX.{i}.err; fails when any copy fails
  fake DIR --reply junk|wrong-type  a fake server that answers every command
      with bytes that are not RESP (junk) or with a well-formed reply of the
      wrong type (wrong-type); port in DIR/fake.port
"""
import hashlib
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, port, timeout=5):
        self.sock = socket.create_connection(("127.0.0.1", int(port)), timeout=timeout)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            return RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise ValueError("bad reply %r" % line)

    def call(self, *args):
        self.sock.sendall(encode(*args))
        return self.reply()


def ping(port):
    try:
        return Conn(port, timeout=1).call("PING") == "PONG"
    except OSError:
        return False


def daemonize(lifetime, fn):
    """Runs fn in a detached grandchild that dies after lifetime seconds."""
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    signal.signal(signal.SIGALRM, lambda *_: os._exit(0))
    signal.alarm(lifetime)
    try:
        fn()
    finally:
        os._exit(0)


def cmd_start(argv):
    directory = argv[0]
    lifetime = 600
    extra = []
    rest = argv[1:]
    if "--" in rest:
        extra = rest[rest.index("--") + 1:]
        rest = rest[:rest.index("--")]
    if rest[:1] == ["--lifetime"]:
        lifetime = int(rest[1])
    server = shutil.which("redis-server")
    if not server:
        sys.exit("redis-helper: redis-server not found")
    os.makedirs(directory, exist_ok=True)
    directory = os.path.abspath(directory)
    for attempt in range(20):
        port = free_port()
        args = [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", directory, "--daemonize", "no",
                "--logfile", os.path.join(directory, "redis.log")] + extra
        pid_file = os.path.join(directory, "pid")
        if os.path.exists(pid_file):
            os.unlink(pid_file)

        # The watchdog is the server's parent: it reaps it, so its pid cannot
        # be reused while the pid file names it, and kills it after lifetime.
        def watch():
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            with open(pid_file + ".tmp", "w") as f:
                f.write("%d\n" % proc.pid)
            os.rename(pid_file + ".tmp", pid_file)
            try:
                proc.wait(timeout=lifetime)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

        daemonize(lifetime + 5, watch)
        deadline = time.time() + 10
        while time.time() < deadline and not ping(port):
            time.sleep(0.05)
        if ping(port):
            with open(os.path.join(directory, "port"), "w") as f:
                f.write("%d\n" % port)
            print(port)
            return
        cmd_stop([directory])
    sys.exit("redis-helper: redis-server did not start (see %s/redis.log)" % directory)


def _kill(pid, sig=signal.SIGKILL):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def cmd_stop(argv):
    directory = argv[0]
    for name in ("pid", "proxy.pid", "fake.pid"):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            pid = int(open(path).read())
            _kill(pid, signal.SIGTERM)
            for _ in range(100):
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.02)
            else:
                _kill(pid)
            os.unlink(path)


def show(value):
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, RuntimeError):
        return "(error) %s" % value
    return repr(value)


def cmd_cmd(argv):
    print(show(Conn(argv[0]).call(*argv[1:])))


def cmd_put(argv):
    with open(argv[2], "rb") as f:
        print(show(Conn(argv[0]).call("SET", argv[1], f.read())))


def cmd_count(argv):
    conn = Conn(argv[0])
    cursor, total = "0", 0
    while True:
        cursor, keys = conn.call("SCAN", cursor, "MATCH", argv[1], "COUNT", "1000")
        total += len(keys)
        if cursor == b"0":
            break
    print(total)


def replant(data, winner):
    """The record data names winner instead, with a valid checksum."""
    body = data[:data.rindex(b"checksum ")]
    body = re.sub(rb"\nwinner \d+\n.*\n$", b"\nwinner %d\n%s\n" % (len(winner), winner),
                  body, flags=re.S)
    return body + b"checksum " + hashlib.sha256(body).hexdigest().encode() + b"\n"


def cmd_plant(argv):
    port, winner = argv[0], argv[argv.index("--winner") + 1].encode()
    conn = Conn(port)
    cursor, planted = "0", 0
    while True:
        cursor, keys = conn.call("SCAN", cursor, "MATCH", "stc:v1:rec:*", "COUNT", "1000")
        for key in keys:
            ttl = conn.call("PTTL", key)
            conn.call("SET", key, replant(conn.call("GET", key), winner), "PX", str(max(ttl, 1000)))
            planted += 1
        if cursor == b"0":
            break
    print("planted %d" % planted)


def cmd_plant_file(argv):
    winner = argv[argv.index("--winner") + 1].encode()
    for path in argv[:argv.index("--winner")]:
        with open(path, "rb") as f:
            data = replant(f.read(), winner)
        with open(path, "wb") as f:
            f.write(data)
    print("planted %d" % argv.index("--winner"))


def serve(directory, name, handle):
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    with open(os.path.join(directory, name + ".port"), "w") as f:
        f.write("%d\n" % listener.getsockname()[1])

    def run():
        with open(os.path.join(directory, name + ".pid"), "w") as f:
            f.write("%d\n" % os.getpid())
        handle(listener)

    daemonize(600, run)
    for _ in range(200):
        if os.path.exists(os.path.join(directory, name + ".pid")):
            break
        time.sleep(0.01)
    listener.close()


def command_ends(buf):
    """Number of complete RESP commands at the start of buf."""
    count, at = 0, 0
    while True:
        m = re.match(rb"\*(\d+)\r\n", buf[at:])
        if not m:
            return count
        pos = at + m.end()
        for _ in range(int(m.group(1))):
            m2 = re.match(rb"\$(\d+)\r\n", buf[pos:])
            if not m2:
                return count
            pos += m2.end() + int(m2.group(1)) + 2
            if pos > len(buf):
                return count
        at = pos
        count += 1
        buf_left = buf[at:]
        if not buf_left:
            return count


def cmd_proxy(argv):
    directory = argv[0]
    target = int(argv[argv.index("--to") + 1])
    delay = int(argv[argv.index("--delay-ms") + 1]) / 1000 if "--delay-ms" in argv else 0
    kill_after = int(argv[argv.index("--kill-after") + 1]) if "--kill-after" in argv else None
    kill_pid = int(argv[argv.index("--kill-pid") + 1]) if "--kill-pid" in argv else None

    def handle(listener):
        pairs, clients = {}, set()
        seen = 0
        socks = [listener]
        while True:
            if not socks:  # the server was killed: nothing listens any more
                time.sleep(1)
                continue
            ready, _, _ = select.select(socks, [], [], 1)
            for s in ready:
                if s is listener:
                    c, _ = listener.accept()
                    u = socket.create_connection(("127.0.0.1", target))
                    pairs[c], pairs[u] = u, c
                    clients.add(c)
                    socks += [c, u]
                    continue
                if s not in pairs:
                    continue
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b""
                peer = pairs[s]
                if not data:
                    for x in (s, peer):
                        pairs.pop(x, None)
                        if x in socks:
                            socks.remove(x)
                        x.close()
                    continue
                if s in clients and kill_after is not None:
                    seen += command_ends(data)
                    if seen > kill_after:
                        _kill(kill_pid)
                        for x in socks:
                            x.close()
                        socks, pairs = [], {}
                        break
                if s not in clients and delay:
                    time.sleep(delay)
                try:
                    peer.sendall(data)
                except OSError:
                    pass

    serve(directory, "proxy", handle)


def cmd_fake(argv):
    directory = argv[0]
    mode = argv[argv.index("--reply") + 1]
    answer = {"junk": b"HTTP/1.1 400 Bad Request\r\n\r\n", "wrong-type": b":42\r\n"}[mode]

    def handle(listener):
        socks = [listener]
        while True:
            ready, _, _ = select.select(socks, [], [], 1)
            for s in ready:
                if s is listener:
                    c, _ = listener.accept()
                    socks.append(c)
                    continue
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    socks.remove(s)
                    s.close()
                    continue
                for _ in range(max(1, command_ends(data))):
                    try:
                        s.sendall(answer)
                    except OSError:
                        break

    serve(directory, "fake", handle)


def cmd_flip(argv):
    conn, pattern, offset = Conn(argv[0]), argv[1], int(argv[2])
    changed = 0
    for key in conn.call("KEYS", pattern):
        value = conn.call("GET", key)
        at = offset if offset >= 0 else len(value) + offset
        if value is None or not 0 <= at < len(value):
            continue
        conn.call("SETRANGE", key, str(at), bytes([value[at] ^ 1]))
        changed += 1
    print(changed)


def cmd_fleet(argv):
    count, prefix = int(argv[0]), argv[1]
    command = argv[argv.index("--") + 1:]
    procs = []
    for i in range(1, count + 1):
        args = [a.replace("{i}", str(i)) for a in command]
        out = open("%s.%d.out" % (prefix, i), "w")
        err = open("%s.%d.err" % (prefix, i), "w")
        procs.append((i, subprocess.Popen(args, stdout=out, stderr=err)))
    failed = [(i, p.wait()) for i, p in procs]
    failed = [(i, rc) for i, rc in failed if rc != 0]
    for i, rc in failed:
        print("redis-helper: copy %d exited %d" % (i, rc), file=sys.stderr)
    sys.exit(1 if failed else 0)


COMMANDS = {"fleet": cmd_fleet, "plant-file": cmd_plant_file, "put": cmd_put, "start": cmd_start, "stop": cmd_stop, "cmd": cmd_cmd, "count": cmd_count,
            "flip": cmd_flip,
            "plant": cmd_plant, "proxy": cmd_proxy, "fake": cmd_fake}

if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]](sys.argv[2:])
