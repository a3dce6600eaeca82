#!/usr/bin/env python3
"""Groups a perf profile of `orderhub serve --role api` by what the hub does (docs/performance.md, "The hub
after its cuts").

    BENCH_ROUNDS=1 BENCH_PEER=0 BENCH_PERF=/tmp/hub.perf BENCH_PERF_CALLGRAPH=dwarf tests/load/ingest-bench.sh
    perf script -i /tmp/hub.perf -F tid,ip,sym > /tmp/hub.txt
    tests/load/hub-profile-groups.py /tmp/hub.txt 110      # 110: the hub's CPU per order (µs) in a plain run

Each sample of the network thread (the thread with the most samples) is charged to the first group below whose
pattern matches a frame of its call chain, in the order listed: work resumed inside an earlier coroutine's
completion (the answer after the batch's commit) is then charged to what it does, not to the frame that resumed
it. Samples that match no group are "allocations not charged above" (malloc or free on top) or "other". Samples
of the other threads are the database pool's: libpq and libpqxx work, or waits. Needs complete call chains
(perf's dwarf unwinding: the Release build has no frame pointers). Prints a Markdown table: group, % of samples,
µs per order (the shares of the given CPU per order).
"""
import collections
import re
import sys

# (group, pattern on the frames' symbols), first match wins.
GROUPS = [
    ("the answer's `sendmsg`", r"__libc_sendmsg|__sendmsg"),
    ("the request's `recv`", r"__libc_recv|recvfrom"),
    ("the access-log line", r"log_access"),
    ("JSON parse of the body", r"common::json::parse_strict"),
    ("validation and the inbox keys", r"validate_webhook|inbox_keys"),
    ("the order's document and hash (`order_forms`)", r"order_forms"),
    ("the batch entry (`make_entry`)", r"make_entry"),
    ("HTTP answer (Beast serializer, response headers)",
     r"beast::http::serializer|write_some_op|Server::Impl::write|run_write_some_op"),
    ("HTTP request (Beast parser, the request's copies)", r"beast::http::basic_parser|request_line|basic_fields|serve_one"),
    ("the webhook handler around them",
     r"WebhookHandler|LogFields|InboxRecord|Validated::|OrderStore::store|IngestService|hub::ingest::render|"
     r"Routes::handle|PartnerDirectory|answer_body"),
    ("the hand-off to and from the database threads", r"Batcher"),
    ("waiting for events", r"epoll_wait|epoll_ctl|__schedule"),
    ("futex (other hand-offs)", r"futex"),
]
ALLOCATION = re.compile(r"(_int_malloc|malloc|_int_free|cfree|free|unlink_chunk|malloc_consolidate|operator new|"
                        r"operator delete)")
# A database thread's sample is a wait when it was taken in a wait or the switch around it (its leaf in the
# scheduler, below a poll, futex or condition wait); anything else there is the thread's work (the pool's batches
# and the ingest pipe's statements: libpq, their arguments, their results, posting them back).
WAIT = re.compile(r"futex|pthread_cond|__schedule|schedule_hrtimeout|do_sys_poll|ppoll|epoll_wait")


def read_samples(path):
    """perf script output: a header line (tid ...) then one frame per line (ip symbol), samples split by blanks."""
    samples, current = [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                if current:
                    samples.append(current)
                    current = []
                continue
            current.append(line)
    if current:
        samples.append(current)
    return samples


def symbol(frame_line):
    parts = frame_line.strip().split(" ", 1)
    name = parts[1] if len(parts) == 2 else ""
    name = re.sub(r"\+0x[0-9a-f]+$", "", name)
    return re.sub(r" \(.*\)$", "", name)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: hub-profile-groups.py PERF_SCRIPT_OUTPUT HUB_US_PER_ORDER")
    samples = read_samples(sys.argv[1])
    if not samples:
        sys.exit("no samples in " + sys.argv[1])
    per_order = float(sys.argv[2])
    compiled = [(name, re.compile(pattern)) for name, pattern in GROUPS]
    network = collections.Counter(s[0].split()[0] for s in samples).most_common(1)[0][0]
    counts = collections.Counter()
    for sample in samples:
        frames = [symbol(line) for line in sample[1:]]
        if sample[0].split()[0] != network:
            busy = not any(WAIT.search(f) for f in frames)
            counts["database threads: libpq, the statements' arguments and results" if busy
                   else "database threads: waits and wake-ups"] += 1
            continue
        chain = " | ".join(frames)
        group = next((name for name, pattern in compiled if pattern.search(chain)), None)
        if group is None:
            group = ("allocations not charged above" if frames and ALLOCATION.match(frames[0])
                     else "other on the network thread")
        counts[group] += 1
    total = len(samples)
    print(f"{total} samples; µs per order as shares of {per_order:g}")
    print()
    print("| group | % of samples | µs per order |")
    print("|---|---:|---:|")
    for name, n in counts.most_common():
        print(f"| {name} | {100 * n / total:.1f} | {per_order * n / total:.0f} |")


if __name__ == "__main__":
    main()
