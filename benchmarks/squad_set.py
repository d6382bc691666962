"""Write the shared SQuAD 2.0 subset as a Markdown corpus plus an eval question file (a held-out set)."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "eval" / "squad2" / "dev-v2.0.subset-3articles.json"


def main() -> None:
    """One page per paragraph; answerable questions have that page as gold, unanswerable ones expect NOT_FOUND."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path, help="folder to write corpus/ and questions.jsonl into")
    parser.add_argument("--source", type=Path, default=DEFAULT)
    parser.add_argument("--per-class", type=int, default=100, help="answerable and unanswerable questions each")
    args = parser.parse_args()
    corpus = args.out / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    answerable, unanswerable = [], []
    for article in json.loads(args.source.read_text())["data"]:
        for n, paragraph in enumerate(article["paragraphs"]):
            name = f"{article['title']}-{n:03d}.md"
            (corpus / name).write_text(f"# {article['title'].replace('_', ' ')} ({n})\n\n{paragraph['context']}\n")
            for qa in paragraph["qas"]:
                if qa["is_impossible"]:
                    unanswerable.append({"id": qa["id"], "question": qa["question"], "expected": "NOT_FOUND"})
                else:
                    answerable.append({"id": qa["id"], "question": qa["question"], "gold": [name],
                                       "expected": "GROUNDED"})
    rng = random.Random(0)  # a fixed sample, so the figures can be reproduced
    picked = rng.sample(answerable, args.per_class) + rng.sample(unanswerable, args.per_class)
    (args.out / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in picked))


if __name__ == "__main__":
    main()
