#include "pos/logic/storable.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <string_view>
#include <vector>

namespace pos {

bool contains_nul(const boost::json::value& value) {
    // Iterative: the body was depth-limited by the parser, but a stack costs nothing here.
    std::vector<const boost::json::value*> pending{&value};
    while (!pending.empty()) {
        const boost::json::value* v = pending.back();
        pending.pop_back();
        if (v->is_string()) {
            if (std::string_view(v->get_string()).find('\0') != std::string_view::npos) return true;
        } else if (v->is_array()) {
            for (const auto& element : v->get_array()) pending.push_back(&element);
        } else if (v->is_object()) {
            for (const auto& [key, element] : v->get_object()) {
                if (key.find('\0') != std::string_view::npos) return true;
                pending.push_back(&element);
            }
        }
    }
    return false;
}

}  // namespace pos
