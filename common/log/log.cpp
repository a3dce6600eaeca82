#include "common/log/log.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/serialize.hpp>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>

#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include "common/json/writer.hpp"

namespace common::log {
namespace {

std::atomic<Format> g_format{Format::json};

constexpr std::size_t kLineArenaBytes = 2048;

// An access line takes about 300 bytes.
constexpr std::size_t kLineReserve = 512;
std::mutex g_mutex;

const char* level_name(Level l) {
    switch (l) {
        case Level::debug: return "debug";
        case Level::info: return "info";
        case Level::warn: return "warn";
        case Level::error: return "error";
    }
    return "info";
}

// The time of a line: 2026-11-26T14:02:11.123Z, into `out` (kTimeBytes). The text up to the second is made once
// per second and thread (a busy hub writes a line per request).
constexpr std::size_t kTimeBytes = 64;
std::string_view now_iso(std::array<char, kTimeBytes>& out) {
    struct Second {
        std::time_t secs = -1;
        std::array<char, kTimeBytes> text{};
        std::size_t size = 0;
    };
    thread_local Second cached;
    const auto now = std::chrono::system_clock::now();
    const std::time_t secs = std::chrono::system_clock::to_time_t(now);
    const auto ms =
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
    if (secs != cached.secs) {
        std::tm tm{};
        gmtime_r(&secs, &tm);
        const int n = std::snprintf(cached.text.data(), cached.text.size() - 4, "%04d-%02d-%02dT%02d:%02d:%02d.",
                                    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        cached.size = n > 0 ? std::min(static_cast<std::size_t>(n), cached.text.size() - 5) : 0;
        cached.secs = secs;
    }
    std::size_t n = cached.size;
    std::copy_n(cached.text.data(), n, out.data());
    out[n++] = static_cast<char>('0' + ms / 100);
    out[n++] = static_cast<char>('0' + ms / 10 % 10);
    out[n++] = static_cast<char>('0' + ms % 10);
    out[n++] = 'Z';
    return {out.data(), n};
}

std::string now_iso() {
    std::array<char, kTimeBytes> text;
    return std::string(now_iso(text));
}

// The process's LineWriter on stderr while a BackgroundStderr lives.
std::atomic<LineWriter*> g_background{nullptr};

// Writes all of `text` to `fd`: false when the descriptor refuses it for good (EPIPE: the reader went away, or
// another error). A descriptor left non-blocking by whoever shares it is waited for with poll.
bool write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n >= 0) {
            text.remove_prefix(static_cast<std::size_t>(n));
            continue;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            pollfd p{.fd = fd, .events = POLLOUT, .revents = 0};
            (void)::poll(&p, 1, 100);
            continue;
        }
        return false;
    }
    return true;
}

}  // namespace

struct LineWriter::State {
    int fd;
    std::size_t capacity;
    std::chrono::milliseconds gather;
    std::mutex mutex;
    std::condition_variable wake;   // the thread waits here for lines
    std::condition_variable ended;  // close waits here for the thread's end
    std::string pending;
    std::uint64_t unreported = 0;  // dropped since the last notice
    std::atomic<std::uint64_t> dropped{0};
    bool idle = false;    // the thread waits for a first line: the next push wakes it
    bool urgent = false;  // a warning or an error is queued: write without the gather
    bool stop = false;
    bool closed = false;  // the thread ended: pushes go to the caller
    bool broken = false;  // the descriptor refused a write for good
    std::thread thread;   // joined or detached by close

    void run() {
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe, nullptr);  // a reader that went away is an EPIPE here, not the process's end
        std::string batch;
        std::unique_lock lock(mutex);
        for (;;) {
            idle = true;
            wake.wait(lock, [&] { return !pending.empty() || unreported > 0 || stop; });
            idle = false;
            if (pending.empty() && unreported == 0) {
                closed = true;
                ended.notify_all();
                return;
            }
            // What comes within the gather goes in the same write (at 10,000 requests a second, about a hundred lines).
            if (!stop && !urgent)
                wake.wait_for(lock, gather, [&] { return stop || urgent || pending.size() >= capacity / 2; });
            urgent = false;
            batch.clear();
            batch.swap(pending);
            if (const std::uint64_t lost = std::exchange(unreported, 0)) {
                auto notice = format_line(g_format.load(), now_iso(), Level::warn, "log lines dropped",
                                          {{"count", lost}, {"reason", "stderr did not take them in time"}});
                notice += '\n';
                batch.insert(0, notice);
            }
            lock.unlock();
            const bool written = write_all(fd, batch);
            lock.lock();
            if (!written) {
                broken = true;
                dropped += static_cast<std::uint64_t>(std::count(batch.begin(), batch.end(), '\n'));
            }
        }
    }
};

LineWriter::LineWriter(int fd, std::size_t capacity_bytes, std::chrono::milliseconds gather)
    : state_(std::make_shared<State>()) {
    state_->fd = fd;
    state_->capacity = capacity_bytes;
    state_->gather = gather;
    state_->thread = std::thread([s = state_] { s->run(); });
}

LineWriter::~LineWriter() { close(std::chrono::seconds(2)); }

LineWriter::Push LineWriter::push(std::string_view line, bool urgent) {
    State& s = *state_;
    bool wake = false;
    {
        std::lock_guard lock(s.mutex);
        if (s.closed) return Push::closed;
        if (s.broken || s.pending.size() + line.size() + 1 > s.capacity) {
            ++s.dropped;
            if (!s.broken) ++s.unreported;  // told in the next write; nobody would read it after a refusal
            return Push::dropped;
        }
        s.pending.append(line);
        s.pending += '\n';
        wake = s.idle || (urgent && !s.urgent) || s.pending.size() >= s.capacity / 2;
        s.idle = false;
        s.urgent = s.urgent || urgent;
    }
    if (wake) s.wake.notify_one();
    return Push::queued;
}

bool LineWriter::close(std::chrono::milliseconds wait) {
    State& s = *state_;
    bool ended = false;
    {
        std::unique_lock lock(s.mutex);
        s.stop = true;
        s.wake.notify_one();
        ended = s.ended.wait_for(lock, wait, [&] { return s.closed; });
    }
    if (s.thread.joinable()) {
        if (ended)
            s.thread.join();
        else
            s.thread.detach();  // blocked in write(): it holds the state and ends with the process at the latest
    }
    return ended;
}

std::uint64_t LineWriter::dropped() const { return state_->dropped.load(); }

BackgroundStderr::BackgroundStderr(std::size_t capacity_bytes) {
    auto* writer = new LineWriter(STDERR_FILENO, capacity_bytes);
    LineWriter* none = nullptr;
    if (g_background.compare_exchange_strong(none, writer))
        installed_ = writer;
    else
        delete writer;  // one at a time: the first stays, and only its owner ends it
}

BackgroundStderr::~BackgroundStderr() {
    if (!installed_) return;
    // Every thread that logs has ended by now (serve holds this longer than its threads). A writer whose stderr
    // still does not take the lines stays installed (never deleted): later lines are queued or dropped rather than
    // blocking the process's exit.
    if (!installed_->close(std::chrono::seconds(2))) return;
    g_background.store(nullptr);
    delete installed_;
}

std::uint64_t dropped_lines() {
    const LineWriter* writer = g_background.load();
    return writer ? writer->dropped() : 0;
}

void set_format(Format format) { g_format.store(format); }

bool parse_format(std::string_view text, Format& out) {
    if (text == "json")
        out = Format::json;
    else if (text == "text")
        out = Format::text;
    else
        return false;
    return true;
}

namespace {

/// True when a field's key is "time", "level", "msg" or another field's.
bool repeats_a_key(Fields fields, MoreFields more) {
    // A key's length and last byte pick one of 64 bits: a key is compared with the others only when its bit was
    // taken (an access line's dozen keys compared pairwise cost about 800 instructions a request).
    const auto bit = [](std::string_view key) {
        const std::size_t last = key.empty() ? 0 : static_cast<unsigned char>(key.back());
        return std::uint64_t{1} << ((key.size() * 7 + last) % 64);
    };
    std::array<std::string_view, 32> seen{"time", "level", "msg"};
    std::size_t n = 3;
    std::uint64_t taken = bit("time") | bit("level") | bit("msg");
    auto repeated = [&](std::string_view key) {
        if (n == seen.size()) return true;  // a line this long is rare: the object below sorts it out
        const std::uint64_t b = bit(key);
        if ((taken & b) != 0)
            for (std::size_t i = 0; i < n; ++i)
                if (seen[i] == key) return true;
        taken |= b;
        seen[n++] = key;
        return false;
    };
    for (const auto& field : fields)
        if (repeated(field.first)) return true;
    for (const auto& field : more)
        if (repeated(field.first)) return true;
    return false;
}

/// The JSON line written piece by piece, in the order of its keys: the text a boost::json::object of the same
/// fields serializes to, without building the object (the access log writes one per request).
void write_json_line(common::json::Writer& w, std::string_view time, Level level, std::string_view message,
                     Fields fields, MoreFields more) {
    w.raw("{\"time\":");
    w.text(time);
    w.raw(",\"level\":");
    w.text(level_name(level));
    w.raw(",\"msg\":");
    w.text(message);
    for (const auto& [k, v] : fields) {
        w.key(",", k);
        if (v.is_text)
            w.text(v.text);
        else if (v.json.is_int64())
            w.number(v.json.get_int64());
        else if (v.json.is_uint64())
            w.number(v.json.get_uint64());
        else
            w.value(v.json);
    }
    for (const auto& [k, v] : more) {
        w.key(",", k);
        w.text(v);
    }
    w.raw("}");
}

/// The JSON line into `line` (emptied first; its room is kept).
void json_line_into(std::string& line, std::string_view time, Level level, std::string_view message, Fields fields,
                    MoreFields more) {
    line.clear();
    common::json::Writer w(line, kLineReserve);  // cuts `line` to the text when it ends, here
    write_json_line(w, time, level, message, fields, more);
}

/// A line's text past this many bytes is not kept for the thread's next line.
constexpr std::size_t kKeptLineBytes = 16384;

}  // namespace

std::string format_line(Format format, std::string_view time, Level level, std::string_view message, Fields fields,
                        MoreFields more) {
    if (format == Format::json) {
        if (!repeats_a_key(fields, more)) {
            std::string line;
            json_line_into(line, time, level, message, fields, more);
            return line;
        }
        // A repeated key keeps its first place and its last value, as a JSON object would.
        std::array<unsigned char, kLineArenaBytes> buffer;
        boost::json::monotonic_resource arena(buffer.data(), buffer.size());
        boost::json::object o(3 + fields.size() + more.size(), &arena);
        o["time"] = time;
        o["level"] = level_name(level);
        o["msg"] = message;
        for (const auto& [k, v] : fields) o[k] = v.as_json();
        for (const auto& [k, v] : more) o[k] = v;
        return boost::json::serialize(o);
    }
    std::string line = std::string(time) + " " + level_name(level) + " " + std::string(message);
    auto append = [&line](std::string_view k, const boost::json::value& v) {
        line += " ";
        line += k;
        line += "=";
        if (!v.is_string()) {
            line += boost::json::serialize(v);
            return;
        }
        std::string_view text = v.get_string();
        // Quoted when a reader could not tell where the value ends (or when it is empty).
        const bool plain = !text.empty() && std::none_of(text.begin(), text.end(), [](char c) {
            return c == ' ' || c == '"' || c == '=' || static_cast<unsigned char>(c) < 0x20;
        });
        line += plain ? std::string(text) : boost::json::serialize(v);
    };
    for (const auto& [k, v] : fields) append(k, v.as_json());
    for (const auto& [k, v] : more) append(k, boost::json::value(std::string_view(v)));
    return line;
}

std::string format_line(Format format, std::string_view time, Level level, std::string_view message, Fields fields) {
    return format_line(format, time, level, message, fields, {});
}

void write(Level level, std::string_view message, Fields fields, MoreFields more) {
    std::array<char, kTimeBytes> time;
    // Each thread formats its lines into one string whose room it keeps (an access line per request), unless a
    // line made it larger than kKeptLineBytes.
    thread_local std::string kept;
    std::string line;
    const Format format = g_format.load();
    if (format == Format::json && !repeats_a_key(fields, more)) {
        line.swap(kept);
        json_line_into(line, now_iso(time), level, message, fields, more);
    } else {
        line = format_line(format, now_iso(time), level, message, fields, more);
    }
    const auto keep_room = [&line] {
        if (line.capacity() <= kKeptLineBytes) kept.swap(line);
    };
    if (LineWriter* background = g_background.load(); background) {
        if (background->push(line, level >= Level::warn) != LineWriter::Push::closed) {
            keep_room();
            return;
        }
    }
    line += '\n';
    {
        std::lock_guard lock(g_mutex);
        std::fwrite(line.data(), 1, line.size(), stderr);
    }
    keep_room();
}

void write(Level level, std::string_view message, Fields fields) { write(level, message, fields, {}); }

}  // namespace common::log
