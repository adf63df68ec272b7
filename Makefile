.PHONY: demo test lint bench

## Bring the whole app up on the embedded default and print where to log in.
demo:
	scripts/demo.sh

## Run the whole test suite (starts or installs PostgreSQL, Redis and Chromium as needed).
test:
	scripts/test.sh

lint:
	.venv/bin/ruff check . && DJANGO_DEBUG=true .venv/bin/mypy apps config workers && .venv/bin/lint-imports

bench:
	@echo "Benchmarks: see bench/ and docs/benchmarks.md (e.g. .venv/bin/python bench/import.py)"
