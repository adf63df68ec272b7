"""Run inside Inspect AI's own virtual environment (bench/peers/judging.py starts it).

One Inspect eval: N samples, each a distinct judge prompt (the prompt bench/judge_throughput.py
sends), one ``generate()`` against the fake OpenAI-compatible endpoint (``openai-api``
provider, so Inspect's own OpenAI client), scored by ``pattern`` on the "Rating: n" line, at
most ``--concurrency`` connections. Prints one JSON line: wall and CPU seconds of ``eval()``.

    <inspect venv>/bin/python bench/peers/inspect_eval.py --base-url URL --samples 2000
"""

import argparse
import json
import os
import tempfile
import time

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import pattern
from inspect_ai.solver import generate


def prompt(i: int) -> str:
    # bench/judge_throughput.py's strategy and item i, as Discern renders them
    source = f"Source document number {i}: the council met and decided things."
    text = f"Summary {i}: the council decided on item {i}."
    return f"Rate the text on fluency.\n{source}\n{text}\nRating?"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    samples = [
        # the fake endpoint answers "Rating: len(prompt) % 5 + 1": every sample scores correct
        Sample(input=prompt(i), target=str(len(prompt(i)) % 5 + 1), id=i)
        for i in range(args.samples)
    ]
    task = Task(dataset=samples, solver=generate(), scorer=pattern(r"Rating: (\d)"))
    os.environ["BENCH_API_KEY"] = "not-needed"
    with tempfile.TemporaryDirectory() as logs:
        started, cpu = time.perf_counter(), time.process_time()
        [log] = eval(
            task,
            model="openai-api/bench/bench-model",
            model_base_url=args.base_url,
            max_connections=args.concurrency,
            max_tokens=32,
            log_dir=logs,
            display="none",
        )
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        results = log.results
        summary = {
            "status": log.status,
            "error": str(log.error) if log.error else None,
            "completed": results.completed_samples if results else 0,
            "accuracy": results.scores[0].metrics["accuracy"].value if results else None,
            "wall_s": wall,
            "cpu_s": cpu,
        }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
