#pragma once

#include <string_view>

namespace hub::adminapi {

/// schemas/openapi.yaml as one JSON document with the JSON Schemas it references bundled in components/schemas
/// (cmake/bundle_openapi.py, at build time): what GET /api/admin/v1/openapi.json serves.
std::string_view openapi_json();

}  // namespace hub::adminapi
