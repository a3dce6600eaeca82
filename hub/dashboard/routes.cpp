#include "hub/dashboard/routes.hpp"

#include <algorithm>

namespace hub::dashboard {

Target target_of(std::string_view path) {
    constexpr std::string_view kOrders = "orders/";
    if (!path.starts_with(kOrders)) return {std::string(path), {}};
    const std::string_view rest = path.substr(kOrders.size());
    const auto slash = rest.find('/');
    const std::string_view id = rest.substr(0, slash);
    const std::string_view action = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
    Target t{"orders/{id}", std::string(id), id.empty() || id.size() > 64};
    if (!action.empty()) t.pattern += "/" + std::string(action);
    return t;
}

const Route* find_route(std::string_view pattern) {
    const auto* r = std::find_if(kRoutes.begin(), kRoutes.end(), [&](const Route& x) { return x.pattern == pattern; });
    return r == kRoutes.end() ? nullptr : r;
}

}  // namespace hub::dashboard
