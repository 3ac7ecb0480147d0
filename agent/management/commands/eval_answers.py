from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from agent.evaluation import (
    EvalFileError,
    items_load,
    items_on_missing_pages,
    items_select,
    outcomes_json,
    report,
    report_table,
    run_blocking,
)


class Command(BaseCommand):
    help = (
        "Ask every question of a JSONL eval file through the real turn runner and report "
        "search hit@1/hit@5/MRR, answers with a right citation, declines and wrong citations."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", type=Path, help="JSONL questions (see bench/answer_eval.jsonl)")
        parser.add_argument("--offline", action="store_true", help="use the built-in model")
        parser.add_argument("--json", type=Path, dest="json_out", help="write every outcome here")
        parser.add_argument("--split", choices=["tune", "test", "all"], default="test")

    def handle(
        self, *args, file: Path, offline: bool, json_out: Path | None, split: str, **options
    ):
        try:
            items = items_select(items_load(file), split)
        except (OSError, EvalFileError) as exc:
            raise CommandError(str(exc)) from None
        if not items:
            raise CommandError(f"{file} has no questions in the {split!r} split.")
        if missing := items_on_missing_pages(items):
            raise CommandError(f"{file}: asked on a page that is not published: {missing}")
        with tqdm(total=len(items), desc="questions", unit="q", file=self.stderr) as bar:
            outcomes = run_blocking(
                items, offline=offline, progress=lambda done, total: bar.update(1)
            )
        figures = report(items, outcomes)
        self.stdout.write(f"{len(items)} questions, split {split}\n\n{report_table(figures)}")
        if json_out:
            json_out.write_text(outcomes_json(outcomes, figures), encoding="utf-8")
            self.stdout.write(f"\nOutcomes written to {json_out}")
