#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the results of one kunit.py run.

usage: kunit_count.py JSON [LOG]

JSON is what `kunit.py run --json=JSON` wrote; LOG is the kernel console log
(BUILD_DIR/test.log). Prints exactly one line on stdout,

    N passed, N failed, N skipped

and exits 1 if anything failed, 0 otherwise. Reasons go to stderr.

- Test cases are the leaves of the JSON tree (each parameter of a
  parameterised case is one test): PASS counts as passed, SKIP as skipped,
  anything else (FAIL, ERROR = crashed) as failed.
- A missing or unreadable JSON (build or boot failure) counts as 1 failed;
  so does a run in which no test case ran at all.
- Any kernel splat in LOG (BUG:, WARNING:, UBSAN:, Oops, Kernel panic,
  lockdep reports) adds 1 failed: KUnit in 6.1 does not fail a test for a
  WARN_ON or a lockdep report. A LOG that was named but is missing also adds
  1, unless the JSON is missing too (then the kernel never ran).
- A crash or a hang drops the dying case and everything after it from the
  JSON, so a LOG whose top-level KTAP plan (1..N) got fewer than N suite
  results also counts; splats and an early end together add 1, not 2.
"""
import json
import re
import sys

SPLAT = re.compile(
    r'^(BUG|WARNING|UBSAN)[: ]|^Oops|^Kernel panic'
    r'|possible recursive locking|WARNING: possible circular'
    # lockdep's wait-context report (PROVE_RAW_LOCK_NESTING) is bracketed
    r'|^\[ BUG: ')
# printk timestamp, if CONFIG_PRINTK_TIME is on
TIMESTAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')
# top-level KTAP: the plan and one result line per suite
PLAN = re.compile(r'^1\.\.(\d+)')
RESULT = re.compile(r'^(not )?ok \d+ ')


def walk(group, counts, failures):
    for case in group.get('test_cases', []):
        status = case.get('status')
        if status == 'PASS':
            counts['passed'] += 1
        elif status == 'SKIP':
            counts['skipped'] += 1
        else:
            counts['failed'] += 1
            failures.append('%s/%s: %s' % (group.get('name'), case.get('name'), status))
    for sub in group.get('sub_groups', []):
        walk(sub, counts, failures)


def scan_log(path):
    """Return (splat lines, planned suites or None, suites that reported)."""
    found, planned, reported = [], None, 0
    with open(path, errors='replace') as f:
        for line in f:
            line = TIMESTAMP.sub('', line.rstrip('\r\n').replace('\r', ''))
            if SPLAT.search(line):
                found.append(line)
            m = PLAN.match(line)
            if m and planned is None:
                planned = int(m.group(1))
            elif RESULT.match(line):
                reported += 1
    return found, planned, reported


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    counts = {'passed': 0, 'failed': 0, 'skipped': 0}
    failures = []

    have_json = False
    try:
        with open(argv[1]) as f:
            walk(json.load(f), counts, failures)
        have_json = True
        if not any(counts.values()):
            counts['failed'] += 1
            failures.append('no test case ran (wrong filter glob, or the kernel died first?)')
    except (OSError, ValueError) as e:
        counts['failed'] += 1
        failures.append('no usable JSON (build or boot failed?): %s' % e)

    # Without a JSON the kernel most likely never booted: no log to check.
    if len(argv) == 3 and have_json:
        try:
            found, planned, reported = scan_log(argv[2])
        except OSError as e:
            found, planned, reported = [], 0, 0
            counts['failed'] += 1
            failures.append('cannot read the kernel log: %s' % e)
        # A crash or hang loses the case that died and all after it from
        # the JSON; the log shows it as a splat or as missing suite results.
        # Either way: one more failure.
        problems = []
        if found:
            problems.append('kernel splat in %s (%d line(s)), first: %s'
                            % (argv[2], len(found), found[0]))
            for line in found[:10]:
                sys.stderr.write('kunit_count: splat: %s\n' % line)
        if planned is not None and reported < planned:
            problems.append('run ended early: %d of %d suites reported a result'
                            % (reported, planned))
        if problems:
            counts['failed'] += 1
            failures.extend(problems)

    for msg in failures:
        sys.stderr.write('kunit_count: %s\n' % msg)
    print('%d passed, %d failed, %d skipped'
          % (counts['passed'], counts['failed'], counts['skipped']))
    return 1 if counts['failed'] else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
