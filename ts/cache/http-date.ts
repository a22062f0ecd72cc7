// HTTP-date parsing (RFC 9110 §5.6.7): IMF-fixdate plus the two obsolete forms recipients must
// accept. Date.parse is not used: it reads asctime dates as local time.
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

// Sun, 06 Nov 1994 08:49:37 GMT
const IMF = /^[a-z]{3}, (\d{2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) gmt$/i;
// Sunday, 06-Nov-94 08:49:37 GMT
const RFC850 = /^[a-z]+, (\d{2})-([a-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) gmt$/i;
// Sun Nov  6 08:49:37 1994
const ASCTIME = /^[a-z]{3} ([a-z]{3}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/i;

function build(year: number, month: string, day: string, h: string, m: string, s: string): number | undefined {
  const mon = MONTHS.indexOf(month.toLowerCase());
  if (mon === -1) return undefined;
  const hh = Number(h);
  const mm = Number(m);
  const ss = Number(s);
  if (hh > 23 || mm > 59 || ss > 60) return undefined;
  const t = Date.UTC(year, mon, Number(day), hh, mm, ss);
  return Number.isNaN(t) ? undefined : t;
}

/** Milliseconds since the epoch, or undefined when `value` is not an HTTP-date. */
export function parseHttpDate(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.trim();
  let m = IMF.exec(v);
  if (m) return build(Number(m[3]), m[2]!, m[1]!, m[4]!, m[5]!, m[6]!);
  m = RFC850.exec(v);
  if (m) {
    // Two-digit years more than 50 years ahead are in the past century (RFC 9110 §5.6.7).
    let year = 2000 + Number(m[3]);
    if (year > new Date().getUTCFullYear() + 50) year -= 100;
    return build(year, m[2]!, m[1]!, m[4]!, m[5]!, m[6]!);
  }
  m = ASCTIME.exec(v);
  if (m) return build(Number(m[6]), m[1]!, m[2]!, m[3]!, m[4]!, m[5]!);
  return undefined;
}
