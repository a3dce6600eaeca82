#pragma once

#include <string>
#include <string_view>

namespace common::text {

/// Whether terminal_safe() keeps line breaks and tabs (a body printed as it was sent) or escapes them too (one
/// table cell, one `key: value` line).
enum class LineBreaks { escape, keep };

/// `text` from outside (a webhook's customer name, a POS's answer) made safe to print on a terminal: nothing in it
/// can move the cursor, change colours, set the window title or reorder what follows. Escaped, so the operator
/// still sees what was sent: C0 controls and DEL as `\n`, `\t`, `\r` or `\xNN`; C1 controls and the Unicode
/// format characters that reorder text (bidi embeddings, overrides and isolates; line and paragraph separators) as
/// `\u{XXXX}`; each byte that is not part of well-formed UTF-8 as `\xNN`; and the backslash itself as `\\`, so that
/// an escape in the output always means an escaped character. Everything else, non-ASCII letters included, is
/// kept. Pure.
std::string terminal_safe(std::string_view text, LineBreaks breaks = LineBreaks::escape);

/// Serialized JSON (whose strings already escape C0 controls, quotes and backslashes) made safe the same way:
/// what JSON leaves raw (DEL, C1 controls, reordering format characters, bytes outside UTF-8) is escaped as above;
/// backslashes are kept, so JSON's own escapes read as JSON. Pure.
std::string terminal_safe_json(std::string_view json);

}  // namespace common::text
