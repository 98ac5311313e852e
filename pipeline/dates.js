// Dates to epoch milliseconds, with the calendar checked: Date.parse rolls "2010-02-30" over to 2010-03-02
// and "T24:00" to the next day, which would store or filter on a day nobody wrote. One parser for the corpus
// reader, the store and the server.

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** RFC 3339 full-date, or date-time (time zone "Z", "+09:00", "+0900" or "+09"); what the API's schemas accept. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt\s](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2})(?::?(\d{2}))?))?$/;
/** The leading date (and time) of other spellings Date.parse takes ("2012/09/01 10:00", "2012-09-01T10:00"). */
const LEADING_DATE = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:(?:[Tt]|\s+)(\d{1,2}):(\d{2})(?::(\d{2}))?)?/;

/**
 * @param {number} y @param {number} mo 1-12 @param {number} d
 */
function dayExists(y, mo, d) {
  if (mo < 1 || mo > 12 || d < 1) return false;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return d <= (mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1]);
}

/**
 * Epoch ms of a date, NaN when the text is not one or names a day or time that does not exist.
 * RFC 3339 dates (UTC midnight) and date-times are computed here (a leap second counts as the next second);
 * other spellings Date.parse understands are kept, once their leading year-month-day and time are checked.
 * @param {string} text
 * @returns {number}
 */
export function parseDate(text) {
  const s = text.trim();
  const m = RFC3339.exec(s);
  if (m) {
    const [y, mo, d] = [+m[1], +m[2], +m[3]];
    if (!dayExists(y, mo, d)) return NaN;
    if (m[4] === undefined) return utc(y, mo, d, 0, 0, 0, 0);
    const [h, mi, sec] = [+m[4], +m[5], +m[6]];
    if (h > 23 || mi > 59 || sec > 60) return NaN;
    const ms = m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0;
    let offset = 0;
    if (m[8] !== 'Z' && m[8] !== 'z') {
      const [oh, om] = [+m[10], +(m[11] ?? 0)];
      if (oh > 23 || om > 59) return NaN;
      offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
    }
    return utc(y, mo, d, h, mi, sec, ms) - offset;
  }
  const lead = LEADING_DATE.exec(s);
  if (lead) {
    if (!dayExists(+lead[1], +lead[2], +lead[3])) return NaN;
    if (lead[4] !== undefined && (+lead[4] > 23 || +lead[5] > 59 || +(lead[6] ?? 0) > 59)) return NaN;
  }
  return Date.parse(s);
}

/**
 * Date.UTC, with years 0-99 as written (Date.UTC reads them as 1900-1999).
 * @param {number} y @param {number} mo 1-12 @param {number} d @param {number} h @param {number} mi @param {number} sec @param {number} ms
 */
function utc(y, mo, d, h, mi, sec, ms) {
  if (y >= 100) return Date.UTC(y, mo - 1, d, h, mi, sec, ms);
  // 400 years later the calendar is the same; then step back.
  const t = new Date(Date.UTC(y + 400, mo - 1, d, h, mi, sec, ms));
  return t.setUTCFullYear(t.getUTCFullYear() - 400);
}
