"""`make compat` (compat/peers.sh): each imported tool's run finds the knee ladder's own run finds.

Usage: python peers_check.py LADDER_RUN TOOL_RUN...

Reads each run directory's findings.json (one model) and passes when every tool's run has a
knee in the same interval as ladder's run or an adjacent one (its knee step at most one step
away) and, when both estimate the cap, an estimated cap within 10% of ladder's.
"""

import json
import os
import sys


def knee(run):
    with open(os.path.join(run, "findings.json")) as f:
        found = json.load(f)
    k = found[0]["knee"]
    if k.get("status") != "knee":
        sys.exit(f"peers: FAIL: {run} found no knee ({k.get('status')})")
    return k


def main():
    ref_run, tools = sys.argv[1], sys.argv[2:]
    ref = knee(ref_run)
    print(
        f"ladder: knee in ({ref['max_clean_concurrency']}, {ref['concurrency']}], "
        f"step {ref['step']}, estimated cap {ref.get('estimated_cap')}"
    )
    failed = False
    for run in tools:
        k = knee(run)
        cap, ref_cap = k.get("estimated_cap"), ref.get("estimated_cap")
        off = abs(k["step"] - ref["step"])
        cap_ok = cap is None or ref_cap is None or abs(cap - ref_cap) <= 0.1 * ref_cap
        verdict = "ok" if off <= 1 and cap_ok else "FAIL"
        print(
            f"{run}: knee in ({k['max_clean_concurrency']}, {k['concurrency']}], step "
            f"{k['step']} ({off} from ladder's), estimated cap {cap}: {verdict}"
        )
        if cap is None:
            print(f"  {run}: no estimated cap (the interval alone is compared)")
        failed |= verdict != "ok"
    if failed:
        sys.exit("peers: FAIL: a tool's run found another knee than ladder's")


if __name__ == "__main__":
    main()
