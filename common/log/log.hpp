#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace common::log {

enum class Level { debug, info, warn, error };
enum class Format { json, text };

/// Chooses the line format for the whole process (ORDERHUB_LOG_FORMAT); thread-safe.
void set_format(Format format);

/// Parses "json" or "text".
bool parse_format(std::string_view text, Format& out);

/// A field value: strings, numbers, booleans or JSON. A string is viewed, not copied: give fields only to the call
/// that logs them, as a braced list (its strings live until that call returns).
struct Value {
    Value(const std::string& s) : text(s), is_text(true) {}
    Value(std::string_view s) : text(s), is_text(true) {}
    Value(const char* s) : text(s), is_text(true) {}
    template <class T>
    requires std::is_arithmetic_v<T> Value(T n) : json(n) {}
    Value(boost::json::value j) : json(std::move(j)) {}
    /// The value as JSON (a string's copy).
    boost::json::value as_json() const { return is_text ? boost::json::value(text) : json; }

    std::string_view text;  ///< a string's text, when is_text
    bool is_text = false;
    boost::json::value json;  ///< anything else
};

using Fields = std::initializer_list<std::pair<std::string_view, Value>>;

/// One line without its line feed: a JSON object {time, level, msg, fields...}, or for humans
/// `TIME LEVEL message key=value ...` (values with spaces, quotes, `=` or control characters are JSON-quoted).
std::string format_line(Format format, std::string_view time, Level level, std::string_view message, Fields fields);

/// Text fields known only at run time (an access line's fields that a handler set), written after the fixed ones.
using MoreFields = std::span<const std::pair<std::string_view, std::string>>;

/// format_line with `more` after `fields`.
std::string format_line(Format format, std::string_view time, Level level, std::string_view message, Fields fields,
                        MoreFields more);

/// A bounded buffer of lines that a thread of its own writes to a file descriptor, so that a reader of that
/// descriptor that stalls (a log shipper, journald, a terminal on hold) never stalls whoever logs: a line that
/// does not fit is dropped and counted, never waited for, and the next write starts with a `log lines dropped`
/// warning that says how many. The thread writes what gathered over ten milliseconds in one system call (at once
/// for a warning or an error): at 10,000 requests a second a hundred access lines a write, and the thread wakes
/// about a hundred times a second, not five hundred (its wake-ups were most of its CPU, docs/performance.md). A reader
/// that went away (EPIPE; SIGPIPE is blocked in the thread) makes every later line count as dropped.
class LineWriter {
public:
    static constexpr std::size_t kDefaultCapacity = 8u << 20;  ///< about 30,000 access lines
    static constexpr std::chrono::milliseconds kDefaultGather{10};

    LineWriter(int fd, std::size_t capacity_bytes = kDefaultCapacity,
               std::chrono::milliseconds gather = kDefaultGather);
    /// close(2 s).
    ~LineWriter();
    LineWriter(const LineWriter&) = delete;
    LineWriter& operator=(const LineWriter&) = delete;

    enum class Push { queued, dropped, closed };
    /// Queues `line` and its line feed; `urgent` (a warning or an error) wakes the thread without the gather.
    Push push(std::string_view line, bool urgent);
    /// Writes what is queued, then ends the thread, waiting at most `wait`. True when it ended; later pushes are
    /// then `closed`. False when the descriptor did not take the lines in time: the thread is left to finish (or to
    /// end with the process) and pushes keep being queued or dropped, never blocking.
    bool close(std::chrono::milliseconds wait);
    /// Lines dropped so far.
    std::uint64_t dropped() const;

private:
    struct State;
    std::shared_ptr<State> state_;
};

/// While it lives, `write` hands every line of the process to one LineWriter on stderr (a service's `serve` holds
/// one for its whole run); before and after, lines are written to stderr directly. Its end waits up to 2 s for the
/// queued lines.
class BackgroundStderr {
public:
    explicit BackgroundStderr(std::size_t capacity_bytes = LineWriter::kDefaultCapacity);
    ~BackgroundStderr();
    BackgroundStderr(const BackgroundStderr&) = delete;
    BackgroundStderr& operator=(const BackgroundStderr&) = delete;

private:
    LineWriter* installed_ = nullptr;  ///< this one's writer; null when another BackgroundStderr was there first
};

/// Lines the process dropped because stderr did not take them in time (0 without a BackgroundStderr).
std::uint64_t dropped_lines();

/// Writes one line to stderr: time, level, message and fields. Never pass secrets, bodies or full phones.
void write(Level level, std::string_view message, Fields fields = {});
/// write with `more` after `fields`.
void write(Level level, std::string_view message, Fields fields, MoreFields more);

inline void info(std::string_view message, Fields fields = {}) { write(Level::info, message, fields); }
inline void warn(std::string_view message, Fields fields = {}) { write(Level::warn, message, fields); }
inline void error(std::string_view message, Fields fields = {}) { write(Level::error, message, fields); }

}  // namespace common::log
