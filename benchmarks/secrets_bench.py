"""The masker (kimi_compact_tui/secrets.py): precision and recall on the
labelled corpus (tests/fixtures/secrets/corpus.json), and its speed.

    .venv/bin/python -m benchmarks.secrets_bench [--messages 20000]

- recall: the secrets whose value is gone from the masked text, over all secrets;
- precision: the masked texts that held a secret, over all texts masked at all
  (a look-alike that comes out changed is a false positive);
- speed: ``mask_secrets`` over the text of a generated session of
  ``--messages`` messages (the default shape, one text), CPU seconds and MB/s,
  and over each message apart (as the probe masks its tail);
- the compaction request of a generated ``--request`` -message kimi session
  (``build_request``) with and without masking (``mask_texts``: the
  prefilter, then the masker on what it lets through), and ``mask_texts``
  against ``mask_secrets`` text by text on the same parts.

    .venv/bin/python -m benchmarks.secrets_bench --request 100000 --request-only

times the request alone (issue 31's session size; ``mask_secrets`` part by
part left out, it takes minutes there) and says how many parts the
prefilter let through to the masker.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CORPUS = ROOT / "tests" / "fixtures" / "secrets" / "corpus.json"
LATER = ROOT / "tests" / "fixtures" / "secrets" / "heldout.json"  # written after the masker


def score(mask: Callable[[str], str], corpus: dict[str, Any] | None = None) -> dict[str, Any]:
    data = corpus or json.loads(CORPUS.read_text(encoding="utf-8"))
    secrets, lookalikes = data["secrets"], data["lookalikes"]
    caught = [s for s in secrets if s["secret"] not in mask(s["text"])]
    changed = [x for x in lookalikes if mask(x["text"]) != x["text"]]
    flagged = sum(1 for s in secrets if mask(s["text"]) != s["text"]) + len(changed)
    true_flags = flagged - len(changed)
    return {
        "secrets": len(secrets),
        "lookalikes": len(lookalikes),
        "recall": len(caught) / len(secrets),
        "precision": true_flags / flagged if flagged else 1.0,
        "missed": [s["shape"] for s in secrets if s not in caught],
        "false_positives": [x["shape"] for x in changed],
    }


def texts(n: int) -> list[str]:
    from benchmarks.generate import generate_messages

    out = []
    for m in generate_messages(n):
        content = m.get("content")
        out.append(content if isinstance(content, str) else json.dumps(content))
    return out


def speed(mask: Callable[[str], str], n: int) -> dict[str, float]:
    parts = texts(n)
    whole = "\n".join(parts)
    mask("warm up: password=abcdefgh")
    start = time.process_time()
    mask(whole)
    one = time.process_time() - start
    start = time.process_time()
    for part in parts:
        mask(part)
    each = time.process_time() - start
    mb = len(whole.encode("utf-8")) / 1e6
    return {"messages": n, "mb": mb, "whole_s": one, "each_s": each, "mb_per_s": mb / one}


def request_speed(n: int, each: bool = True) -> dict[str, float]:
    """CPU seconds of the compaction request of a generated ``n``-message
    session, masked and not, and of masking its parts both ways (``each``:
    part by part too)."""
    from benchmarks import generate
    from kimi_compact_tui.compaction.request import build_request
    from kimi_compact_tui.config import AppConfig
    from kimi_compact_tui.formats import load_session
    from kimi_compact_tui.job import prepare_compaction
    from kimi_compact_tui.secrets import _gated, mask_secrets, mask_texts

    session = load_session(generate.ensure(n)["kimi"])
    prep = prepare_compaction(session, AppConfig())
    spec = AppConfig().compaction.as_spec()
    mask_secrets("warm up: password=abcdefgh")

    def best(fn: Callable[[], object]) -> float:
        times = []
        for _ in range(3):
            start = time.process_time()
            fn()
            times.append(time.process_time() - start)
        return min(times)

    def build(mask: bool) -> Any:
        request = build_request(session.messages, prep.plan, prep.prompt, spec, mask=mask)
        assert request.body  # built when first read: built here, to be timed
        return request

    parts = build(False).parts
    full, assigned = _gated(parts)
    return {
        "messages": n,
        "parts": len(parts),
        "mb": sum(len(p.encode("utf-8", "surrogatepass")) for p in parts) / 1e6,
        "let_through": len(full),
        "to_assigned": len(assigned),
        "plain_s": best(lambda: build(False)),
        "masked_s": best(lambda: build(True)),
        "mask_texts_s": best(lambda: mask_texts(parts)),
        "each_s": best(lambda: [mask_secrets(p) for p in parts]) if each else float("nan"),
    }


def print_request(r: dict[str, float]) -> None:
    each = "" if r["each_s"] != r["each_s"] else f", mask_secrets part by part {r['each_s']:.3f} s"
    print(
        f"compaction request of {r['messages']:,} messages ({r['parts']:,} parts, "
        f"{r['mb']:.1f} MB), best of 3: built {r['plain_s']:.3f} s, built and masked "
        f"{r['masked_s']:.3f} s CPU; mask_texts {r['mask_texts_s']:.3f} s{each}; let through: "
        f"{r['let_through']:,} parts to every detector, {r['to_assigned']:,} to the assigned rule"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--request", type=int, default=10_000)
    parser.add_argument(
        "--request-only", action="store_true", help="time the request alone, not part by part"
    )
    args = parser.parse_args(argv)
    if args.request_only:
        print_request(request_speed(args.request, each=False))
        return 0
    from kimi_compact_tui.secrets import mask_secrets

    for name, path in (("corpus", CORPUS), ("written later", LATER)):
        s = score(mask_secrets, json.loads(path.read_text(encoding="utf-8")))
        print(
            f"{name}: {s['secrets']} secrets, {s['lookalikes']} look-alikes; "
            f"recall {s['recall']:.3f}, precision {s['precision']:.3f}"
        )
        for shape in s["missed"]:
            print(f"  missed: {shape}")
        for shape in s["false_positives"]:
            print(f"  false positive: {shape}")
    f = speed(mask_secrets, args.messages)
    print(
        f"speed: {f['messages']:,} messages, {f['mb']:.1f} MB: one text {f['whole_s']:.2f} s CPU "
        f"({f['mb_per_s']:.1f} MB/s); message by message {f['each_s']:.2f} s"
    )
    print_request(request_speed(args.request))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
