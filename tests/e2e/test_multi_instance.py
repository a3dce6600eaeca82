"""Several hub instances on one database (issue 10): three `orderhub serve --role all` processes behind HAProxy
with the deployment's configuration (deploy/haproxy/haproxy.cfg), 5,000 orders sent through it. Each order is
stored once and delivered to the POS once, the webhooks are spread over the instances, and so is the
forwarding (the forwarders coordinate through SKIP LOCKED, nothing else)."""
import asyncio
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability"))
from lib import Platform, Setup, forwarder_id, free_port, http_post, order_body, psql, reconcile  # noqa: E402

from harness import check, eq, finish  # noqa: E402

ORDERS = 5000
setup = Setup(tempfile.mkdtemp(prefix="e2e-multi-"))
setup.set_pos(setup.pos_port)
pos = setup.start_pos()
ports = [free_port() for _ in range(3)]
hubs = [setup.start_hub(p, name=f"orderhub{i + 1}") for i, p in enumerate(ports)]
ids = [forwarder_id(h) for h in hubs]
front = free_port()
haproxy = setup.start_haproxy(front, ports)

platform = Platform(lambda: front, setup.webhook_path)


async def send_all():
    queue = list(range(1, ORDERS + 1))

    async def worker():
        while queue:
            n = queue.pop()
            ext = f"M-{n}"
            for _ in range(50):  # a platform retries until 200; bounded here
                status, answer = await http_post(front, setup.webhook_path, order_body(ext))
                platform.sent += 1
                if status == 200:
                    platform.acked[ext] = answer["order_id"]
                    break
                platform._note(status)
                await asyncio.sleep(0.2)
            else:
                platform.gave_up += 1
    await asyncio.gather(*(worker() for _ in range(32)))

asyncio.run(send_all())
eq(len(platform.acked), ORDERS, "every order acknowledged through HAProxy")
problems = reconcile("multi_instance", setup, platform, delivery_timeout=240)
eq(problems, [], "each order stored once and delivered to the POS once")

per_forwarder = dict(line.split("|") for line in psql(
    setup.cluster.url, "SELECT forwarder || '|' || count(*) FROM hub.pos_delivery_attempts "
                       "WHERE outcome = 'delivered' GROUP BY forwarder").splitlines())
print(f"deliveries per instance: {per_forwarder}")
for i, fid in enumerate(ids):
    check(int(per_forwarder.get(fid, 0)) >= ORDERS // 20, f"instance {i + 1} delivered at least 5% of the orders")
eq(sum(int(v) for v in per_forwarder.values()), ORDERS, "one delivered attempt per order")
for i, h in enumerate(hubs):
    with open(h.log_path) as f:
        served = sum(1 for line in f if '"route":"/webhooks/{key}"' in line)
    check(served >= ORDERS // 20, f"instance {i + 1} answered at least 5% of the webhooks ({served})")
haproxy.stop()
for h in hubs:
    eq(h.stop(), 0, f"{h.name} exits 0 on SIGTERM")
pos.stop()
finish()
