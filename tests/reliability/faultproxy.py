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
