"""`orderhub maintain` runs by itself in the shipped deployments: a systemd timer that starts
orderhub-maintain.service (hourly), whose command, run as written against a real database with the owner's URL,
creates the coming partitions; the compose file's `maintain` service loops over `orderhub maintain` every hour as
the owner the migrations use. `systemd-analyze verify` checks the units when the machine has it."""
import datetime
import os
import re
import shlex
import shutil
import subprocess
import tempfile

import yaml

from harness import HUB, SOURCE, check, create_database, eq, finish, hub_env, psql, run

SYSTEMD = os.path.join(SOURCE, "deploy", "systemd")


def unit(name):
    """A unit file's sections: {section: {key: [values in order]}} (systemd allows a key several times)."""
    sections, current = {}, None
    with open(os.path.join(SYSTEMD, name)) as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith(("#", ";")):
                continue
            m = re.fullmatch(r"\[(\w+)\]", line)
            if m:
                current = sections.setdefault(m.group(1), {})
                continue
            key, _, value = line.partition("=")
            check(current is not None and _ == "=", f"{name}: '{line}' is a key=value line inside a section")
            if current is not None:
                current.setdefault(key.strip(), []).append(value.strip())
    return sections


timer = unit("orderhub-maintain.timer")
service = unit("orderhub-maintain.service")
eq(timer.get("Timer", {}).get("Unit"), ["orderhub-maintain.service"], "the timer starts orderhub-maintain.service")
eq(timer.get("Timer", {}).get("OnCalendar"), ["hourly"], "the timer fires every hour")
eq(timer.get("Install", {}).get("WantedBy"), ["timers.target"], "the timer is enabled with the timers")
eq(service.get("Service", {}).get("Type"), ["oneshot"], "the service runs once per start")
exec_start = service.get("Service", {}).get("ExecStart", [""])
eq(len(exec_start), 1, "one ExecStart")
argv = shlex.split(exec_start[0])
eq(argv, ["/usr/local/bin/orderhub", "maintain"], "the service runs `orderhub maintain`")
# Like the migrations, it runs as the owner: the same environment files as orderhub-migrate.service.
migrate = unit("orderhub-migrate.service")
eq(service["Service"].get("EnvironmentFile"), migrate["Service"].get("EnvironmentFile"),
   "the same environment files (owner's URL) as orderhub-migrate.service")
eq(service["Service"].get("User"), migrate["Service"].get("User"), "the same system user as the migrations")

# systemd's own reading of both units (the binary path pointed at the build's).
if shutil.which("systemd-analyze"):
    d = tempfile.mkdtemp(prefix="units-")
    for name in ("orderhub-maintain.timer", "orderhub-maintain.service"):
        with open(os.path.join(SYSTEMD, name)) as f:
            text = f.read().replace("/usr/local/bin/orderhub", HUB)
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    r = subprocess.run(["systemd-analyze", "verify", os.path.join(d, "orderhub-maintain.timer"),
                        os.path.join(d, "orderhub-maintain.service")], capture_output=True, text=True, timeout=60)
    eq(r.returncode, 0, f"systemd-analyze verify: {r.stderr.strip()}")
    shutil.rmtree(d)
else:
    print("systemd-analyze not found: unit files checked by the parser above only")

# The service's command does its work on a real database.
url = create_database()
env = hub_env(url)
eq(run(HUB, "migrate", env=env).returncode, 0, "migrate")
month = datetime.date.today().replace(day=1)
ahead = (month + datetime.timedelta(days=40)).replace(day=1)
name = f"inbox_y{ahead.year:04d}m{ahead.month:02d}"
r = run(HUB, *argv[1:], env=env)
eq(r.returncode, 0, f"the unit's command: {r.stderr.strip()}")
eq(psql(url, f"SELECT to_regclass('hub.{name}') IS NOT NULL"), "t", f"the unit's command made hub.{name}")

# compose.yaml: a maintain service that loops over `orderhub maintain` hourly, as the migrating owner.
with open(os.path.join(SOURCE, "deploy", "compose.yaml")) as f:
    compose = yaml.safe_load(f)
services = compose["services"]
m = services.get("maintain", {})
entry = m.get("entrypoint") or []
script = entry[-1] if entry else ""
eq(entry[:2], ["/bin/sh", "-c"], "compose maintain: a shell loop")
check(re.search(r"while\b.*\borderhub maintain\b.*\bsleep 3600\b", script),
      f"compose maintain: `orderhub maintain` then an hour's sleep, forever ({script})")
eq(m.get("environment", {}).get("ORDERHUB_DATABASE_URL"), services["migrate"]["environment"]["ORDERHUB_DATABASE_URL"],
   "compose maintain: the owner's URL, as the migrations")
eq(m.get("depends_on", {}).get("migrate", {}).get("condition"), "service_completed_successfully",
   "compose maintain: after the migrations")
eq(m.get("build"), services["migrate"]["build"], "compose maintain: the hub's image")
# The loop itself, once, with the build's binary and no hour's wait.
one = script.replace("orderhub maintain", shlex.quote(HUB) + " maintain").replace("sleep 3600", "break")
psql(url, f"DROP TABLE hub.{name}")
r = subprocess.run(["/bin/sh", "-c", one], env=dict(os.environ, **env), capture_output=True, text=True, timeout=60)
eq(r.returncode, 0, f"the compose loop runs: {r.stderr.strip()}")
eq(psql(url, f"SELECT to_regclass('hub.{name}') IS NOT NULL"), "t", f"the compose loop made hub.{name}")

finish()
