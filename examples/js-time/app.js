// The JavaScript of js-time.wasm (see world.wit and build.sh). A function
// whose WIT result is result<T, E> returns T for ok and throws E for err.
const DAY = 24 * 60 * 60 * 1000;
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

// parse reads a YYYY-MM-DD date as midnight UTC, or throws why not.
function parse(date) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) throw `"${date}" is not a date of the form YYYY-MM-DD`;
  const t = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  const d = new Date(t);
  if (d.getUTCFullYear() !== Number(m[1]) || d.getUTCMonth() !== Number(m[2]) - 1 || d.getUTCDate() !== Number(m[3])) {
    throw `"${date}" is not a day of the calendar`;
  }
  return t;
}

export function now() {
  return new Date().toISOString();
}

export function weekday(date) {
  return DAYS[new Date(parse(date)).getUTCDay()];
}

export function addDays(date, days) {
  return new Date(parse(date) + days * DAY).toISOString().slice(0, 10);
}

export function daysBetween(start, end) {
  return Math.round((parse(end) - parse(start)) / DAY);
}
