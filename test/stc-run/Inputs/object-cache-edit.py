#!/usr/bin/env python3
"""Damages the one object-cache entry of a cache directory, for the tests of
stc-run's object cache (test/stc-run/object-cache.test):

  object-cache-edit.py corrupt  DIR   flip one byte in the middle
  object-cache-edit.py truncate DIR   cut the file in half
  object-cache-edit.py version  DIR   claim format version 3 (checksum redone)
  object-cache-edit.py swap SRC DIR   put SRC's entry under DIR's entry name
                                      (a valid entry holding another key)
  object-cache-edit.py container DIR  add one to the object count of
                                      stc-run's container of objects (the
                                      payload), or 16 to a shared library's
                                      size (checksum redone)
  object-cache-edit.py count DIR      print "objects <n>" (how many objects
                                      that container holds) or "library" (it
                                      holds a shared library); nothing changed
  object-cache-edit.py unloadable DIR overwrite the shared library's ELF
                                      header with zeros (checksum redone)
  object-cache-edit.py container1 DIR rewrite that container as version 1
                                      (no alignment padding), as an earlier
                                      stc-run stored it (checksum redone)
"""
import glob
import os
import shutil
import sys


M64 = (1 << 64) - 1
P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                      0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def xxh_round(acc, value):
    return rotl((acc + value * P2) & M64, 31) * P1 & M64


def xxh64(data, seed=0):
    """XXH64, as lib/support/hash.c computes an entry's checksum."""
    n, at = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M64, (seed + P2) & M64, seed, (seed - P1) & M64]
        while n - at >= 32:
            for i in range(4):
                v[i] = xxh_round(v[i], int.from_bytes(data[at + 8 * i:at + 8 * i + 8], "little"))
            at += 32
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & M64
        for x in v:
            h = ((h ^ xxh_round(0, x)) * P1 + P4) & M64
    else:
        h = (seed + P5) & M64
    h = (h + n) & M64
    while n - at >= 8:
        h = (rotl(h ^ xxh_round(0, int.from_bytes(data[at:at + 8], "little")), 27) * P1 + P4) & M64
        at += 8
    if n - at >= 4:
        h = (rotl(h ^ (int.from_bytes(data[at:at + 4], "little") * P1 & M64), 23) * P2 + P3) & M64
        at += 4
    while at < n:
        h = rotl(h ^ (data[at] * P5 & M64), 11) * P1 & M64
        at += 1
    h ^= h >> 33
    h = h * P2 & M64
    h ^= h >> 29
    h = h * P3 & M64
    h ^= h >> 32
    return h


def with_checksum(body):
    return body + b"checksum " + b"%016x" % xxh64(body) + b"\n"


def only_entry(directory):
    entries = glob.glob(os.path.join(directory, "objects-v1", "*.obj"))
    if len(entries) != 1:
        sys.exit("expected one entry in %s, found %d" % (directory, len(entries)))
    return entries[0]


def main():
    mode, directory = sys.argv[1], sys.argv[-1]
    path = only_entry(directory)
    data = bytearray(open(path, "rb").read())
    library = b"stc-run library 1\n"
    if mode == "count":
        if library in data:
            print("library")
            return
        magic = b"stc-run objects 2\n"
        at = data.index(magic) + len(magic)
        print("objects %d" % int(data[at:data.index(b"\n", at)]))
        return
    if mode == "unloadable":
        body = bytearray(data[: data.rindex(b"checksum ")])
        at = body.index(b"\x7fELF", body.index(library))
        body[at:at + 64] = bytes(64)
        data = with_checksum(bytes(body))
        with open(path, "wb") as out:
            out.write(data)
        return
    if mode == "corrupt":
        data[len(data) // 2] ^= 0x01
    elif mode == "truncate":
        data = data[: len(data) // 2]
    elif mode == "version":
        body = bytes(data[: data.rindex(b"checksum ")])
        body = body.replace(b"version 2\n", b"version 3\n", 1)
        data = with_checksum(body)
    elif mode == "container":
        body = bytes(data[: data.rindex(b"checksum ")])
        magic = (library if library in body else b"stc-run objects 2\n"
                 if b"stc-run objects 2\n" in body else b"stc-run objects 1\n")
        at = body.index(magic) + len(magic)
        end = body.index(b"\n", at)
        count = int(body[at:end]) + (16 if magic == library else 1)
        body = body[:at] + str(count).encode() + body[end:]
        data = with_checksum(body)
    elif mode == "container1":
        body = bytes(data[: data.rindex(b"checksum ")])
        head = body.index(b"\nobject ") + len(b"\nobject ")
        length_end = body.index(b"\n", head)
        length = int(body[head:length_end])
        payload = body[length_end + 1 : length_end + 1 + length]
        lines = payload.split(b"\n", 2)
        if lines[0] != b"stc-run objects 2":
            sys.exit("not a version 2 container")
        count = int(lines[1])
        fields = payload.split(b"\n", 2 + count)
        sizes = [int(x) for x in fields[2 : 2 + count]]
        at = len(b"\n".join(fields[: 2 + count])) + 1
        at += (16 - at % 16) % 16
        objects = []
        for size in sizes:
            objects.append(payload[at : at + size])
            at += size + (16 - size % 16) % 16
        old = (b"stc-run objects 1\n%d\n" % count
               + b"".join(b"%d\n" % size for size in sizes) + b"".join(objects))
        body = (body[:head] + str(len(old)).encode() + b"\n" + old
                + body[length_end + 1 + length :])
        data = with_checksum(body)
    elif mode == "swap":
        shutil.copyfile(only_entry(sys.argv[2]), path)
        return
    else:
        sys.exit("unknown mode " + mode)
    with open(path, "wb") as out:
        out.write(data)


if __name__ == "__main__":
    main()
