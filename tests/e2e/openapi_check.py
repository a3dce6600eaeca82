"""Checks real answers against schemas/openapi.yaml: the answer's path is matched to a path template of the
description, its (method, status) must be described there, and its JSON body must validate (Draft 2020-12,
python3-jsonschema) against the described schema. `watch(service)` checks every answer a Service gives on the
admin API and the dashboard's JSON API, so a test that calls a route the description lacks, or gets an answer
the description does not allow, fails. Only a 404 on a path no template matches and a 405 on a method a template
lacks need no entry of their own: they must then be in the hub's failure shape."""
import json
import os
import re
import warnings

import jsonschema
import yaml

from harness import SOURCE, check

SCHEMAS = os.path.join(SOURCE, "schemas")
OPENAPI = os.path.join(SCHEMAS, "openapi.yaml")
BASE_URI = "https://orderhub.example/schemas/openapi.yaml"
FAILURE = "https://orderhub.example/schemas/hub-response.schema.json"
WATCHED = ("/api/admin/v1/", "/api/dashboard/")

with open(OPENAPI, encoding="utf-8") as _f:
    spec = yaml.safe_load(_f)

# The JSON Schemas of schemas/ by their $id; the description sits beside them, so its relative refs
# (./order-created.schema.json) resolve to the same ids.
store = {}
for _name in sorted(os.listdir(SCHEMAS)):
    if _name.endswith(".schema.json"):
        with open(os.path.join(SCHEMAS, _name), encoding="utf-8") as _f:
            _schema = json.load(_f)
        store[_schema["$id"]] = _schema
store[BASE_URI] = spec

seen = set()  # (method, template, status) of every answer checked


def _template_regex(template):
    parts = re.split(r"(\{[^}/]+\})", template)
    return re.compile("^" + "".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts) + "$")


# Templates with more literal text first, so /orders/{id}/resend wins over a template of parameters only.
_TEMPLATES = sorted(((t, _template_regex(t)) for t in spec["paths"]),
                    key=lambda tr: -len(re.sub(r"\{[^}]+\}", "", tr[0])))


def template_for(path):
    """The path template of openapi.yaml that `path` (query string ignored) matches, or None."""
    path = path.split("?", 1)[0]
    for template, regex in _TEMPLATES:
        if regex.match(path):
            return template
    return None


def resolve_local(node):
    while isinstance(node, dict) and "$ref" in node and node["$ref"].startswith("#/"):
        target = spec
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        node = target
    return node


def schema_for(template, method, status):
    """The JSON Schema of the answer (template, method, status); None when that answer is not described."""
    responses = spec["paths"].get(template, {}).get(method.lower(), {}).get("responses", {})
    response = resolve_local(responses.get(str(status)))
    if response is None:
        return None
    return response.get("content", {}).get("application/json", {}).get("schema")


def problems(schema, body):
    """The validation errors of `body` against `schema` (a list of strings; empty when valid)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # RefResolver: the API of Debian 12's jsonschema 4.10
        resolver = jsonschema.RefResolver(base_uri=BASE_URI, referrer=spec, store=store)
        validator = jsonschema.Draft202012Validator(schema, resolver=resolver)
        return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(body)]


def answer_problems(method, path, status, body, content_type="application/json"):
    """Why the answer is not one openapi.yaml allows (a list of strings; empty when it is)."""
    template = template_for(path)
    if template is None:
        if status == 404:
            return problems({"$ref": FAILURE}, body)
        return [f"{method} {path} answered {status}, but openapi.yaml describes no such path"]
    operation = spec["paths"][template].get(method.lower())
    if operation is None:
        if status == 405:
            return problems({"$ref": FAILURE}, body)
        return [f"{method} {template} answered {status}, but openapi.yaml describes no {method} there"]
    seen.add((method.upper(), template, status))
    if str(status) not in operation.get("responses", {}):
        return [f"{method} {template} answered {status}, which openapi.yaml does not describe"]
    schema = schema_for(template, method, status)
    if schema is None:
        return [] if not (content_type or "").startswith("application/json") else [
            f"{method} {template} {status}: a JSON answer the description gives no JSON schema for"]
    if not (content_type or "").startswith("application/json"):
        return [f"{method} {template} {status}: Content-Type {content_type!r}, described as application/json"]
    return problems(schema, body)


def answer_valid(method, path, status, body, what, content_type="application/json"):
    errs = answer_problems(method, path, status, body, content_type)
    check(not errs, f"{what}: {method} {path} {status} answer {body!r} matches openapi.yaml: {errs}")


def request_valid(template, method, body, what):
    schema = spec["paths"][template][method.lower()]["requestBody"]["content"]["application/json"]["schema"]
    errs = problems(schema, body)
    check(not errs, f"{what}: request body valid: {errs}")


def watch(service, prefixes=WATCHED):
    """Makes every later service.request on a path under `prefixes` check its answer against openapi.yaml."""
    plain = service.request

    def request(method, path, body=None, headers=None, timeout=30):
        status, hdrs, parsed = plain(method, path, body, headers=headers, timeout=timeout)
        if path.startswith(prefixes):
            answer_valid(method, path, status, parsed, "openapi", hdrs.get("content-type", ""))
        return status, hdrs, parsed

    service.request = request
    return service
