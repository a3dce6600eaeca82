"""A small, strict reader of the Prometheus text exposition format 0.0.4 for the tests: it refuses what Prometheus
would refuse (bad names, bad escapes, samples before their TYPE, a family split in two, repeated series,
histograms whose buckets are not cumulative or whose +Inf bucket differs from _count)."""
import math
import re

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


class ExpositionError(ValueError):
    pass


def _value(text):
    if text in ("+Inf", "Inf"):
        return math.inf
    if text == "-Inf":
        return -math.inf
    if text == "NaN":
        return math.nan
    try:
        return float(text)
    except ValueError:
        raise ExpositionError(f"not a number: {text!r}") from None


def _labels(text, pos, lineno):
    """Parses `{a="b",...}` starting at text[pos] == '{'; returns (dict, position after '}')."""
    labels = {}
    pos += 1
    while True:
        if pos < len(text) and text[pos] == "}":
            return labels, pos + 1
        m = LABEL.match(text, pos)
        if not m:
            raise ExpositionError(f"line {lineno}: bad label name at {text[pos:]!r}")
        name = m.group(0)
        pos = m.end()
        if text[pos:pos + 2] != '="':
            raise ExpositionError(f"line {lineno}: expected =\" after {name}")
        pos += 2
        value = []
        while True:
            if pos >= len(text):
                raise ExpositionError(f"line {lineno}: unterminated label value")
            c = text[pos]
            if c == "\\":
                nxt = text[pos + 1:pos + 2]
                if nxt not in ("\\", '"', "n"):
                    raise ExpositionError(f"line {lineno}: bad escape \\{nxt}")
                value.append("\n" if nxt == "n" else nxt)
                pos += 2
            elif c == '"':
                pos += 1
                break
            elif c == "\n":
                raise ExpositionError(f"line {lineno}: line feed in a label value")
            else:
                value.append(c)
                pos += 1
        if name in labels:
            raise ExpositionError(f"line {lineno}: label {name} twice")
        labels[name] = "".join(value)
        if pos < len(text) and text[pos] == ",":
            pos += 1


def parse(text):
    """Returns (families {name: type}, samples {(name, frozenset(labels.items())): value}); raises
    ExpositionError."""
    if text and not text.endswith("\n"):
        raise ExpositionError("the exposition must end with a line feed")
    families, helps, samples, finished = {}, set(), {}, set()
    current = None

    def family_of(sample_name):
        for suffix in ("_bucket", "_sum", "_count"):
            base = sample_name[:-len(suffix)]
            if sample_name.endswith(suffix) and families.get(base) in ("histogram", "summary"):
                return base
        return sample_name

    for lineno, line in enumerate(text.split("\n")[:-1], 1):
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not NAME.fullmatch(name):
                    raise ExpositionError(f"line {lineno}: bad metric name {name!r}")
                if parts[1] == "TYPE":
                    if len(parts) != 4 or parts[3] not in TYPES:
                        raise ExpositionError(f"line {lineno}: bad TYPE line")
                    if name in families:
                        raise ExpositionError(f"line {lineno}: TYPE of {name} twice")
                    families[name] = parts[3]
                else:
                    if name in helps:
                        raise ExpositionError(f"line {lineno}: HELP of {name} twice")
                    helps.add(name)
                if current != name:
                    if name in finished:
                        raise ExpositionError(f"line {lineno}: family {name} split in two")
                    if current:
                        finished.add(current)
                    current = name
            continue
        if not line.strip():
            continue
        m = NAME.match(line)
        if not m:
            raise ExpositionError(f"line {lineno}: bad sample {line!r}")
        name = m.group(0)
        pos = m.end()
        labels = {}
        if pos < len(line) and line[pos] == "{":
            labels, pos = _labels(line, pos, lineno)
        rest = line[pos:].split(" ")
        if len(rest) not in (2, 3) or rest[0] != "":
            raise ExpositionError(f"line {lineno}: bad sample {line!r}")
        value = _value(rest[1])
        fam = family_of(name)
        if fam not in families:
            raise ExpositionError(f"line {lineno}: sample {name} before its TYPE")
        if fam != current:
            raise ExpositionError(f"line {lineno}: sample {name} outside its family")
        key = (name, frozenset(labels.items()))
        if key in samples:
            raise ExpositionError(f"line {lineno}: series {name}{labels} twice")
        samples[key] = value
    # Histograms: cumulative buckets, +Inf equal to _count, a _sum.
    for fam, kind in families.items():
        if kind != "histogram":
            continue
        series = {}
        for (name, labels), value in samples.items():
            if name == fam + "_bucket":
                d = dict(labels)
                if "le" not in d:
                    raise ExpositionError(f"{fam}: a bucket without le")
                le = _value(d.pop("le"))
                series.setdefault(frozenset(d.items()), []).append((le, value))
        for labels, buckets in series.items():
            buckets.sort()
            counts = [c for _, c in buckets]
            if counts != sorted(counts):
                raise ExpositionError(f"{fam}{dict(labels)}: buckets are not cumulative")
            if buckets[-1][0] != math.inf:
                raise ExpositionError(f"{fam}{dict(labels)}: no +Inf bucket")
            if samples.get((fam + "_count", labels)) != buckets[-1][1]:
                raise ExpositionError(f"{fam}{dict(labels)}: _count differs from the +Inf bucket")
            if (fam + "_sum", labels) not in samples:
                raise ExpositionError(f"{fam}{dict(labels)}: no _sum")
    return families, samples


def value(samples, name, **labels):
    """The sample's value, or 0 when the series is absent (counters appear once non-zero)."""
    return samples.get((name, frozenset(labels.items())), 0)
