#!/usr/bin/python3
"""Checks that the hub validator and the JSON Schemas agree on every webhook fixture.

Each fixture is named valid-*.json or invalid-*.json. A fixture passes when the hub (the webhook_verdicts
tool: parse_strict + validate_webhook), the schema (webhook-envelope.schema.json under Draft 2020-12) and the
file name all give the same verdict. The `examples` of every schema must be valid against that schema, and
the envelope examples must also be valid for the hub.

The schema side uses one deliberate tightening, which the hub has too: "integer" means a JSON integer literal
(2.0 is not an integer), see schemas/README.md.

Usage (paths relative to the working directory or absolute):
  diff.py --verdicts build/webhook_verdicts --fixtures tests/fixtures/webhooks --schemas schemas
Exit status 0 when everything agrees, 1 otherwise; the last line reads "N passed, M failed".
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import jsonschema
from jsonschema import Draft202012Validator, RefResolver

ENVELOPE_ID = "https://orderhub.example/schemas/webhook-envelope.schema.json"


def _strict_integer(_checker, instance):
    return isinstance(instance, int) and not isinstance(instance, bool)


StrictValidator = jsonschema.validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _strict_integer),
)


class FixtureError(Exception):
    pass


def _refuse_duplicates(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise FixtureError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def _refuse_constant(name):
    raise FixtureError(f"non-JSON constant {name}")


def load_json(path):
    """Loads a file as strict JSON, as the hub would: no duplicate keys, no NaN or Infinity."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=_refuse_duplicates, parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError) as e:
        raise FixtureError(f"not valid JSON: {e}") from e


def load_schemas(directory):
    store = {}
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        schema = load_json(os.path.join(directory, name))
        if schema.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
            raise FixtureError(f"schema {name} must declare JSON Schema 2020-12")
        if "$id" not in schema:
            raise FixtureError(f"schema {name} has no $id")
        # jsonschema 4.10 re-selects the validator class from "$schema" whenever it descends into a resource,
        # which would drop the strict integer type; every schema here is 2020-12, so the key can go.
        StrictValidator.check_schema(schema)
        schema = {key: value for key, value in schema.items() if key != "$schema"}
        store[schema["$id"]] = schema
    if ENVELOPE_ID not in store:
        raise FixtureError(f"no schema with $id {ENVELOPE_ID} in {directory}")
    return store


def validator_for(store, schema_id):
    schema = store[schema_id]
    resolver = RefResolver(base_uri=schema_id, referrer=schema, store=store)
    return StrictValidator(schema, resolver=resolver)


def schema_problems(validator, instance):
    """JSON pointers of the schema's complaints, for the report."""
    pointers = []
    for error in validator.iter_errors(instance):
        pointer = "".join(f"/{part}" for part in error.absolute_path)
        pointers.append(f"{pointer or '(root)'}: {error.message[:80]}")
    return pointers


def hub_verdicts(tool, paths):
    """Runs the verdict tool on `paths`; returns {file name: (verdict, error paths)}."""
    run = subprocess.run([tool, *paths], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise FixtureError(f"{tool} exited with {run.returncode}: {run.stderr.strip()}")
    verdicts = {}
    for line in run.stdout.splitlines():
        name, verdict, errors = line.split("\t", 2)
        verdicts[name] = (verdict, errors)
    return verdicts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--verdicts", required=True, help="path of the webhook_verdicts tool")
    parser.add_argument("--fixtures", required=True, help="directory of valid-*.json and invalid-*.json")
    parser.add_argument("--schemas", required=True, help="directory of the *.schema.json files")
    args = parser.parse_args()
    tool = os.path.abspath(args.verdicts)

    passed = 0
    failures = []

    store = load_schemas(args.schemas)
    envelope = validator_for(store, ENVELOPE_ID)

    # Fixtures: file name, hub and schema must agree.
    names = sorted(n for n in os.listdir(args.fixtures) if n.endswith(".json"))
    paths = [os.path.join(args.fixtures, n) for n in names]
    hub = hub_verdicts(tool, paths) if paths else {}
    for name, path in zip(names, paths):
        if name.startswith("valid-"):
            expected = "valid"
        elif name.startswith("invalid-"):
            expected = "invalid"
        else:
            failures.append(f"{name}: name must start with valid- or invalid-")
            continue
        try:
            instance = load_json(path)
        except FixtureError as e:
            failures.append(f"{name}: broken fixture: {e}")
            continue
        problems = schema_problems(envelope, instance)
        schema_verdict = "invalid" if problems else "valid"
        hub_verdict, hub_paths = hub.get(name, ("missing", ""))
        if expected == hub_verdict == schema_verdict:
            passed += 1
            continue
        failures.append(
            f"{name}: expected {expected}, hub says {hub_verdict} [{hub_paths}], "
            f"schema says {schema_verdict} {problems}"
        )

    # Examples: valid for their own schema; envelope examples valid for the hub too.
    with tempfile.TemporaryDirectory() as scratch:
        hub_checks = []
        for schema_id, schema in sorted(store.items()):
            short = schema_id.rsplit("/", 1)[-1]
            validator = validator_for(store, schema_id)
            for index, example in enumerate(schema.get("examples", [])):
                label = f"{short} example {index}"
                problems = schema_problems(validator, example)
                if problems:
                    failures.append(f"{label}: schema says invalid {problems}")
                    continue
                if schema_id != ENVELOPE_ID:
                    passed += 1
                    continue
                path = os.path.join(scratch, f"example-{index}.json")
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(example, f)
                hub_checks.append((label, path))
        if hub_checks:
            verdicts = hub_verdicts(tool, [p for _, p in hub_checks])
            for label, path in hub_checks:
                verdict, errors = verdicts.get(os.path.basename(path), ("missing", ""))
                if verdict == "valid":
                    passed += 1
                else:
                    failures.append(f"{label}: hub says {verdict} [{errors}]")

    if not names:
        failures.append(f"no fixtures found in {args.fixtures}")
    for failure in failures:
        print(f"FAIL {failure}")
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (FixtureError, jsonschema.exceptions.SchemaError, OSError) as e:
        print(f"FAIL {e}")
        print("0 passed, 1 failed")
        sys.exit(1)
