"""Scenario 5: two hub instances (--role all) behind HAProxy (deploy/haproxy/haproxy.cfg), one killed with
SIGKILL mid-load while it holds forwarding jobs: nothing acknowledged is lost, nothing reaches the POS twice,
and the jobs the dead instance had claimed are taken over by the other one once their lease expires."""
import tempfile
import time

from faultproxy import FaultProxy
from lib import SHORT, Platform, Setup, finish, forwarder_id, free_port, log, psql, reconcile

seconds = 20 if SHORT else 60
lease = 30  # above the longest POS exchange with these time-outs (orderhub refuses less)
setup = Setup(tempfile.mkdtemp(prefix="rel-s5-"))
proxy_port = free_port()
setup.set_pos(proxy_port)
pos = setup.start_pos()
# The POS answers slowly around the kill, so the dying instance surely holds deliveries in flight.
pos_proxy = FaultProxy(proxy_port, setup.pos_port, delay=1.0)
ports = [free_port(), free_port()]
args = ("--forward-lease-seconds", str(lease), "--forward-timeout-ms", "4000")
hubs = [setup.start_hub(p, *args, name=f"orderhub{i + 1}") for i, p in enumerate(ports)]
ids = [forwarder_id(h) for h in hubs]
front = free_port()
haproxy = setup.start_haproxy(front, ports)
platform = Platform(lambda: front, setup.webhook_path, workers=16)
load = platform.run_in_thread(seconds)
time.sleep(seconds / 2 - 2)
pos_proxy.set_mode("slow")
victim, survivor = hubs[0], hubs[1]
# Kill the victim while it holds deliveries (both forwarders claim from the same queue; either may win a wave).
holding_deadline = time.time() + 20
while time.time() < holding_deadline:
    held = int(psql(setup.cluster.url, f"SELECT count(*) FROM hub.forward_jobs WHERE state = 'in_flight' "
                                       f"AND claimed_by = '{ids[0]}'"))
    if held >= 2:
        break
    time.sleep(0.1)
log(f"SIGKILL {victim.name} (pid {victim.pid}, forwarder {ids[0]})")
victim.kill9()
# A COMMIT the victim sent just before it died may still land: read its claims once its backends are done.
time.sleep(1)
orphaned = psql(setup.cluster.url, f"SELECT order_id FROM hub.forward_jobs WHERE state = 'in_flight' "
                                   f"AND claimed_by = '{ids[0]}'").split()
pos_proxy.set_mode("up")
log(f"{len(orphaned)} jobs were claimed by the killed instance")
load.join()
problems = reconcile("s5_two_hubs", setup, platform, delivery_timeout=lease * 6 + 60)
if not orphaned:
    problems.append("the killed instance held no forwarding jobs: the takeover was not exercised")
else:
    quoted = ",".join(f"'{o}'" for o in orphaned)
    taken = int(psql(setup.cluster.url,
                     f"SELECT count(DISTINCT order_id) FROM hub.pos_delivery_attempts WHERE order_id IN ({quoted}) "
                     f"AND forwarder = '{ids[1]}'"))
    print(f"takeover: {taken} of {len(orphaned)} orphaned jobs delivered by the surviving instance")
    if taken != len(orphaned):
        problems.append(f"only {taken} of {len(orphaned)} orphaned jobs were taken over by the survivor")
haproxy.stop()
survivor.stop()
pos.stop()
finish(problems)
