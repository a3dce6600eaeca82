"""A TCP proxy in front of the POS whose mode a scenario switches: up (pass through), down (refuse new
connections and cut the open ones), slow (hold each answer `delay` seconds). A mode applies at once, also to
keep-alive connections opened before the switch. Runs in a thread of the scenario's process."""
import asyncio
import threading


class FaultProxy:
    def __init__(self, listen_port, target_port, delay=5.0):
        self.listen_port = listen_port
        self.target_port = target_port
        self.delay = delay
        self.mode = "up"
        self.loop = asyncio.new_event_loop()
        self.server = None
        self.open = set()  # writers of the connections under way
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.set_mode("up")

    async def _pipe(self, reader, writer, answers):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                if answers and self.mode == "slow":
                    await asyncio.sleep(self.delay)
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _handle(self, client_reader, client_writer):
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            client_writer.close()
            return
        self.open.update({client_writer, up_writer})
        try:
            await asyncio.gather(self._pipe(client_reader, up_writer, False),
                                 self._pipe(up_reader, client_writer, True))
        finally:
            self.open.difference_update({client_writer, up_writer})

    async def _set(self, mode):
        self.mode = mode
        if mode == "down":
            if self.server:
                self.server.close()
                self.server = None
            for w in list(self.open):  # a POS that goes down takes its open connections with it
                w.close()
        elif self.server is None:
            self.server = await asyncio.start_server(self._handle, "127.0.0.1", self.listen_port, reuse_address=True)

    def set_mode(self, mode):
        asyncio.run_coroutine_threadsafe(self._set(mode), self.loop).result(timeout=10)


class BlackHole:
    """A POS that accepts every TCP connection and never answers: it reads what arrives and keeps the connection
    open until the client gives up (or stop()). Records, per connection, when it was accepted and when its first
    bytes arrived (`requests`: [(accepted, first_data)], epoch seconds). Runs in a thread of the caller's process.
    Port 0 picks a free port (`port` after construction)."""

    def __init__(self, listen_port=0):
        import time
        self._time = time.time
        self.loop = asyncio.new_event_loop()
        self.open = set()
        self.requests = []
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

        async def start():
            return await asyncio.start_server(self._handle, "127.0.0.1", listen_port, reuse_address=True)
        self.server = asyncio.run_coroutine_threadsafe(start(), self.loop).result(timeout=10)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _handle(self, reader, writer):
        entry = [self._time(), None]
        self.requests.append(entry)
        self.open.add(writer)
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                if entry[1] is None:
                    entry[1] = self._time()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self.open.discard(writer)
            writer.close()

    def stop(self):
        """Stops listening and cuts every connection held (the port is free afterwards)."""
        async def stop():
            self.server.close()
            for w in list(self.open):
                w.close()
            await self.server.wait_closed()
        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(timeout=10)


class Stalled:
    """A POS whose connects time out: a socket listening with a backlog of 0 that never accepts, its accept queue
    filled by connections of our own, so the kernel drops every further SYN. stop() frees the port."""

    def __init__(self, listen_port=0):
        import socket
        import time
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", listen_port))
        self.listener.listen(0)
        self.port = self.listener.getsockname()[1]
        self.fillers = []
        for _ in range(3):
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect(("127.0.0.1", self.port))
            except BlockingIOError:
                pass
            self.fillers.append(s)
        time.sleep(0.2)
        probe = socket.socket()
        probe.settimeout(0.5)
        try:
            probe.connect(("127.0.0.1", self.port))
            raise RuntimeError("Stalled: a connect went through; the accept queue is not full")
        except (TimeoutError, socket.timeout):
            pass
        finally:
            probe.close()

    def stop(self):
        for s in self.fillers:
            s.close()
        self.listener.close()


if __name__ == "__main__":
    # `python3 faultproxy.py blackhole [PORT]`: a black-holed POS until SIGTERM/SIGINT; prints its port on the first
    # line, and at exit how many connections it held and how many of them sent a request (for the benchmarks).
    import signal
    import sys
    if len(sys.argv) < 2 or sys.argv[1] != "blackhole":
        sys.exit("usage: faultproxy.py blackhole [PORT]")
    hole = BlackHole(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    print(hole.port, flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    while not done.wait(0.5):
        pass
    hole.stop()
    sent = sum(1 for _, first in hole.requests if first is not None)
    print(f"connections={len(hole.requests)} requests={sent}", flush=True)
