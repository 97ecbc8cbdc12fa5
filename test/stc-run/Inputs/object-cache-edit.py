#!/usr/bin/env python3
"""Damages the one object-cache entry of a cache directory, for the tests of
stc-run's object cache (test/stc-run/object-cache.test):

  object-cache-edit.py corrupt  DIR   flip one byte in the middle
  object-cache-edit.py truncate DIR   cut the file in half
  object-cache-edit.py version  DIR   claim format version 2 (checksum redone)
  object-cache-edit.py swap SRC DIR   put SRC's entry under DIR's entry name
                                      (a valid entry holding another key)
  object-cache-edit.py container DIR  add one to the object count of
                                      stc-run's container of objects (the
                                      payload; checksum redone)
"""
import glob
import hashlib
import os
import shutil
import sys


def only_entry(directory):
    entries = glob.glob(os.path.join(directory, "objects-v1", "*.obj"))
    if len(entries) != 1:
        sys.exit("expected one entry in %s, found %d" % (directory, len(entries)))
    return entries[0]


def main():
    mode, directory = sys.argv[1], sys.argv[-1]
    path = only_entry(directory)
    data = bytearray(open(path, "rb").read())
    if mode == "corrupt":
        data[len(data) // 2] ^= 0x01
    elif mode == "truncate":
        data = data[: len(data) // 2]
    elif mode == "version":
        body = bytes(data[: data.rindex(b"checksum ")])
        body = body.replace(b"version 1\n", b"version 2\n", 1)
        data = body + b"checksum " + hashlib.sha256(body).hexdigest().encode() + b"\n"
    elif mode == "container":
        body = bytes(data[: data.rindex(b"checksum ")])
        magic = b"stc-run objects 1\n"
        at = body.index(magic) + len(magic)
        end = body.index(b"\n", at)
        count = int(body[at:end]) + 1
        body = body[:at] + str(count).encode() + body[end:]
        data = body + b"checksum " + hashlib.sha256(body).hexdigest().encode() + b"\n"
    elif mode == "swap":
        shutil.copyfile(only_entry(sys.argv[2]), path)
        return
    else:
        sys.exit("unknown mode " + mode)
    with open(path, "wb") as out:
        out.write(data)


if __name__ == "__main__":
    main()
