// A related answer's result item fields (pipeline/match/precomputed.js resultItem) taken from a stored metadata text
// without parsing it into JavaScript: the event loop then copies text instead of JSON.parse + JSON.stringify.
#pragma once
#include <string>
#include <string_view>

namespace scdv {

/**
 * The JSON text JSON.stringify(resultItem(hit)) gives for the metadata fields, after "id" and "score":
 * `,"title":…,"url":…,"published_at":…,"category":…,"site":…` in that order, each present when the metadata has
 * it. True only when that is provable from the text alone: a JSON object whose values for these keys are strings or
 * null (any other value skipped), each such key once, each such string in the exact form JSON.stringify writes it
 * (valid UTF-8, no control character unescaped, only the escapes it uses: \" \\ \b \f \n \r \t and \u00xx in lower
 * case for the other control characters) — then JSON.stringify(JSON.parse(token)) is the token itself. False
 * otherwise (a lone surrogate's \udxxx, a number, a duplicate key, an `ad` key, anything unexpected): the caller parses the
 * metadata (resultItem), which is always right.
 */
bool resultFields(std::string_view meta, std::string& out);

}  // namespace scdv
