//! rust-dates: date and time utilities for wasmcp, written in Rust against
//! sdk/rust/wasmcp.rs (no crates). Tools: now, unix_to_iso, iso_to_unix,
//! date_add, date_diff, iso_week. Proleptic Gregorian calendar, fixed UTC
//! offsets (no time-zone database), millisecond precision.

#[path = "../../sdk/rust/wasmcp.rs"]
mod wasmcp;

use wasmcp::*;

const MS_PER_DAY: i64 = 86_400_000;
const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

// ---- calendar arithmetic (H. Hinnant's days_from_civil / civil_from_days) ----

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + (m <= 2) as i64, m, d)
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A point in time: milliseconds since the Unix epoch, and the UTC offset
/// (minutes) it is written in.
#[derive(Clone, Copy, Debug)]
struct Instant {
    ms: i64,
    offset_min: i64,
}

/// Local calendar fields of an instant in its offset.
struct Fields {
    y: i64,
    mo: i64,
    d: i64,
    ms_of_day: i64,
}

impl Instant {
    fn local_ms(&self) -> i64 {
        self.ms + self.offset_min * 60_000
    }
    fn fields(&self) -> Fields {
        let l = self.local_ms();
        let (y, mo, d) = civil_from_days(l.div_euclid(MS_PER_DAY));
        Fields { y, mo, d, ms_of_day: l.rem_euclid(MS_PER_DAY) }
    }
    fn from_fields(f: &Fields, offset_min: i64) -> Instant {
        let local = days_from_civil(f.y, f.mo, f.d) * MS_PER_DAY + f.ms_of_day;
        Instant { ms: local - offset_min * 60_000, offset_min }
    }
    fn days(&self) -> i64 {
        self.local_ms().div_euclid(MS_PER_DAY)
    }

    fn to_iso(&self) -> String {
        let f = self.fields();
        let (h, mi, s, ms) = (f.ms_of_day / 3_600_000, f.ms_of_day / 60_000 % 60, f.ms_of_day / 1000 % 60, f.ms_of_day % 1000);
        let year = if (0..=9999).contains(&f.y) { format!("{:04}", f.y) } else { format!("{:+07}", f.y) };
        let mut out = format!("{}-{:02}-{:02}T{:02}:{:02}:{:02}", year, f.mo, f.d, h, mi, s);
        if ms != 0 {
            out += &format!(".{:03}", ms);
        }
        out += &format_offset(self.offset_min);
        out
    }

    /// Adds calendar months, clamping the day to the end of the month.
    fn add_months(&self, months: i64) -> Instant {
        let f = self.fields();
        let total = f.y * 12 + (f.mo - 1) + months;
        let (y, mo) = (total.div_euclid(12), total.rem_euclid(12) + 1);
        let d = f.d.min(days_in_month(y, mo));
        Instant::from_fields(&Fields { y, mo, d, ms_of_day: f.ms_of_day }, self.offset_min)
    }
}

fn format_offset(min: i64) -> String {
    if min == 0 {
        return "Z".into();
    }
    let sign = if min < 0 { '-' } else { '+' };
    format!("{}{:02}:{:02}", sign, min.abs() / 60, min.abs() % 60)
}

/// Parses "Z", "+HH:MM", "-HHMM", "+HH" into minutes.
fn parse_offset(s: &str) -> Result<i64, String> {
    if s == "Z" || s == "z" {
        return Ok(0);
    }
    let b = s.as_bytes();
    let bad = || format!("invalid UTC offset {:?} (use Z, +HH:MM or -HH:MM)", s);
    if b.is_empty() || (b[0] != b'+' && b[0] != b'-') {
        return Err(bad());
    }
    let digits: String = s[1..].chars().filter(|c| *c != ':').collect();
    if !(digits.len() == 2 || digits.len() == 4) || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    let h: i64 = digits[..2].parse().map_err(|_| bad())?;
    let m: i64 = if digits.len() == 4 { digits[2..].parse().map_err(|_| bad())? } else { 0 };
    if h > 23 || m > 59 {
        return Err(bad());
    }
    Ok(if b[0] == b'-' { -(h * 60 + m) } else { h * 60 + m })
}

fn num(s: &str, what: &str, lo: i64, hi: i64) -> Result<i64, String> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!("invalid {} {:?}", what, s));
    }
    let v: i64 = s.parse().map_err(|_| format!("invalid {} {:?}", what, s))?;
    if v < lo || v > hi {
        return Err(format!("{} {} out of range {}..{}", what, v, lo, hi));
    }
    Ok(v)
}

/// Parses ISO 8601 / RFC 3339: YYYY-MM-DD[(T| )HH:MM[:SS[.fff]]][Z|±HH:MM].
/// Without an offset the time is in default_offset.
fn parse_iso(s: &str, default_offset: i64) -> Result<Instant, String> {
    let s = s.trim();
    if s.len() < 10 || s.as_bytes()[4] != b'-' || s.as_bytes()[7] != b'-' {
        return Err(format!("invalid date {:?}: expected YYYY-MM-DD, optionally followed by THH:MM:SS and an offset", s));
    }
    let y = num(&s[0..4], "year", 0, 9999)?;
    let mo = num(&s[5..7], "month", 1, 12)?;
    let d = num(&s[8..10], "day", 1, days_in_month(y, mo))?;
    let mut rest = &s[10..];
    let mut ms_of_day = 0;
    if rest.starts_with('T') || rest.starts_with('t') || rest.starts_with(' ') {
        rest = &rest[1..];
        let end = rest.find(|c: char| c == 'Z' || c == 'z' || c == '+' || c == '-').unwrap_or(rest.len());
        let (time, off) = rest.split_at(end);
        let (hms, frac) = match time.find('.') {
            Some(i) => (&time[..i], &time[i + 1..]),
            None => (time, ""),
        };
        let parts: Vec<&str> = hms.split(':').collect();
        if parts.len() < 2 || parts.len() > 3 {
            return Err(format!("invalid time {:?}: expected HH:MM or HH:MM:SS", time));
        }
        let h = num(parts[0], "hour", 0, 24)?;
        let mi = num(parts[1], "minute", 0, 59)?;
        let sec = if parts.len() == 3 { num(parts[2], "second", 0, 60)? } else { 0 };
        if h == 24 && (mi != 0 || sec != 0) {
            return Err("hour 24 is only valid as 24:00:00".into());
        }
        let mut ms = 0;
        if !frac.is_empty() {
            if !frac.bytes().all(|c| c.is_ascii_digit()) {
                return Err(format!("invalid fraction of a second {:?}", frac));
            }
            let f3: String = frac.chars().chain("000".chars()).take(3).collect();
            ms = f3.parse::<i64>().unwrap_or(0);
        }
        // A leap second (:60) is folded into the next second.
        ms_of_day = ((h * 60 + mi) * 60 + sec) * 1000 + ms;
        rest = off;
    }
    let offset = if rest.is_empty() { default_offset } else { parse_offset(rest)? };
    let local = days_from_civil(y, mo, d) * MS_PER_DAY + ms_of_day;
    Ok(Instant { ms: local - offset * 60_000, offset_min: offset })
}

// ---- configuration: the operator may grant a default offset ----

/// The UTC offset for inputs and outputs that name none: the "offset"
/// argument, else the operator's "default_offset" config, else UTC. A
/// config that is not granted (or not set) is not an error.
fn default_offset(args: &Value) -> Result<i64, Error> {
    if let Some(o) = args["offset"].as_str() {
        return Ok(parse_offset(o)?);
    }
    match host::config_get("default_offset") {
        Ok(s) => Ok(parse_offset(&s).map_err(|e| format!("config default_offset: {}", e))?),
        Err(HostError { kind: ErrorKind::Denied, .. }) | Err(HostError { kind: ErrorKind::Failed { .. }, .. }) => Ok(0),
        Err(e) => Err(e.into()),
    }
}

fn date_arg(args: &Value, key: &str, offset: i64) -> Result<Instant, Error> {
    match &args[key] {
        Value::String(s) => Ok(parse_iso(s, offset)?),
        Value::Number(n) => Ok(Instant { ms: (*n * 1000.0).round() as i64, offset_min: offset }),
        Value::Null => Err(format!("{:?} is required (ISO 8601 date or Unix seconds)", key).into()),
        _ => Err(format!("{:?} must be an ISO 8601 string or Unix seconds", key).into()),
    }
}

fn describe(t: &Instant) -> Value {
    let f = t.fields();
    let wd = (t.days() + 3).rem_euclid(7); // 0 = Monday
    let (iy, iw) = iso_week_of(t.days());
    Value::obj([
        ("iso", Value::from(t.to_iso())),
        ("unix", Value::Number(t.ms.div_euclid(1000) as f64)),
        ("unix_ms", Value::Number(t.ms as f64)),
        ("weekday", Value::from(WEEKDAYS[wd as usize])),
        ("day_of_year", Value::from(t.days() - days_from_civil(f.y, 1, 1) + 1)),
        ("iso_week", Value::from(format!("{:04}-W{:02}-{}", iy, iw, wd + 1))),
    ])
}

/// ISO 8601 week-numbering year and week of a day number.
fn iso_week_of(days: i64) -> (i64, i64) {
    let wd = (days + 3).rem_euclid(7); // 0 = Monday
    let thursday = days - wd + 3;
    let (y, _, _) = civil_from_days(thursday);
    (y, (thursday - days_from_civil(y, 1, 1)) / 7 + 1)
}

fn reply(t: &Instant) -> ToolResult {
    let v = describe(t);
    ToolResult::text(v["iso"].as_str().unwrap_or("")).with_structured(v)
}

// ---- tools ----

fn now(_: &Request, args: &Value) -> Result<ToolResult, Error> {
    let offset = default_offset(args)?;
    let ms = match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(_) => return Err(tool_error("the clock is before 1970")),
    };
    Ok(reply(&Instant { ms, offset_min: offset }))
}

fn unix_to_iso(_: &Request, args: &Value) -> Result<ToolResult, Error> {
    let offset = default_offset(args)?;
    let ts = args["timestamp"].as_f64().ok_or("\"timestamp\" (Unix time, a number) is required")?;
    let scale = match args["unit"].as_str().unwrap_or("s") {
        "s" => 1000.0,
        "ms" => 1.0,
        u => return Err(tool_error(format!("unit {:?}: use \"s\" or \"ms\"", u))),
    };
    let ms = (ts * scale).round();
    if ms.abs() > 8.64e15 {
        return Err(tool_error("timestamp out of range (±275,000 years)"));
    }
    Ok(reply(&Instant { ms: ms as i64, offset_min: offset }))
}

fn iso_to_unix(_: &Request, args: &Value) -> Result<ToolResult, Error> {
    let offset = default_offset(args)?;
    let t = date_arg(args, "date", offset)?;
    let v = describe(&t);
    Ok(ToolResult::text(format!("{}", t.ms.div_euclid(1000))).with_structured(v))
}

fn date_add(_: &Request, args: &Value) -> Result<ToolResult, Error> {
    let offset = default_offset(args)?;
    let mut t = date_arg(args, "date", offset)?;
    let get = |k: &str| -> Result<i64, Error> {
        match &args[k] {
            Value::Null => Ok(0),
            v => v.as_i64().ok_or_else(|| tool_error(format!("{:?} must be an integer", k))),
        }
    };
    let months = get("years")? * 12 + get("months")?;
    if months.abs() > 12 * 100_000 {
        return Err(tool_error("too many years"));
    }
    t = t.add_months(months);
    let delta = ((get("weeks")? * 7 + get("days")?) * 24 + get("hours")?) as i128 * 3_600_000
        + get("minutes")? as i128 * 60_000
        + get("seconds")? as i128 * 1000;
    let ms = t.ms as i128 + delta;
    if ms.abs() > 8_640_000_000_000_000 {
        return Err(tool_error("result out of range"));
    }
    t.ms = ms as i64;
    Ok(reply(&t))
}

fn date_diff(_: &Request, args: &Value) -> Result<ToolResult, Error> {
    let offset = default_offset(args)?;
    let a = date_arg(args, "from", offset)?;
    let b = date_arg(args, "to", offset)?;
    let (lo, hi, sign) = if a.ms <= b.ms { (a, b, 1) } else { (b, a, -1) };
    // Calendar difference: whole months first, then days and time.
    let (fl, fh) = (lo.fields(), hi.fields());
    let mut months = (fh.y - fl.y) * 12 + (fh.mo - fl.mo);
    while months > 0 && lo.add_months(months).ms > hi.ms {
        months -= 1;
    }
    let rest = hi.ms - lo.add_months(months).ms;
    let (days, rem) = (rest / MS_PER_DAY, rest % MS_PER_DAY);
    let total = hi.ms - lo.ms;
    let v = Value::obj([
        ("seconds", Value::Number((sign * total) as f64 / 1000.0)),
        ("days", Value::Number(((sign * total) as f64 / MS_PER_DAY as f64 * 1e6).round() / 1e6)),
        ("years", Value::from(sign * (months / 12))),
        ("months", Value::from(sign * (months % 12))),
        ("days_part", Value::from(sign * days)),
        ("hours", Value::from(sign * (rem / 3_600_000))),
        ("minutes", Value::from(sign * (rem / 60_000 % 60))),
        ("seconds_part", Value::Number((sign * (rem % 60_000)) as f64 / 1000.0)),
    ]);
    let text = format!(
        "{}{} years, {} months, {} days, {:02}:{:02}:{:02} ({} seconds)",
        if sign < 0 { "-" } else { "" },
        months / 12,
        months % 12,
        days,
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        v["seconds"]
    );
    Ok(ToolResult::text(text).with_structured(v))
}

fn iso_week(_: &Request, args: &Value) -> Result<ToolResult, Error> {
    let offset = default_offset(args)?;
    let t = date_arg(args, "date", offset)?;
    let v = describe(&t);
    Ok(ToolResult::text(v["iso_week"].as_str().unwrap_or("")).with_structured(v))
}

const DATE_OUT: &str = r#"{"type":"object","properties":{"iso":{"type":"string"},"unix":{"type":"integer"},"unix_ms":{"type":"integer"},"weekday":{"type":"string"},"day_of_year":{"type":"integer"},"iso_week":{"type":"string"}},"required":["iso","unix","unix_ms","weekday","day_of_year","iso_week"]}"#;

static TOOLS: [Tool; 6] = [
    Tool {
        name: "now",
        description: "The current date and time (ISO 8601, Unix time, weekday, ISO week)",
        input_schema: r#"{"type":"object","properties":{"offset":{"type":"string","description":"UTC offset, e.g. +02:00 (default: the operator's default_offset, else UTC)"}}}"#,
        output_schema: DATE_OUT,
        annotations: r#"{"readOnlyHint":true}"#,
        handler: now,
    },
    Tool {
        name: "unix_to_iso",
        description: "Convert Unix time to an ISO 8601 date",
        input_schema: r#"{"type":"object","properties":{"timestamp":{"type":"number"},"unit":{"enum":["s","ms"],"default":"s"},"offset":{"type":"string"}},"required":["timestamp"]}"#,
        output_schema: DATE_OUT,
        annotations: r#"{"readOnlyHint":true,"idempotentHint":true}"#,
        handler: unix_to_iso,
    },
    Tool {
        name: "iso_to_unix",
        description: "Convert an ISO 8601 date (YYYY-MM-DD[THH:MM[:SS[.fff]]][Z|±HH:MM]) to Unix time",
        input_schema: r#"{"type":"object","properties":{"date":{"type":"string"},"offset":{"type":"string","description":"offset for dates that name none"}},"required":["date"]}"#,
        output_schema: DATE_OUT,
        annotations: r#"{"readOnlyHint":true,"idempotentHint":true}"#,
        handler: iso_to_unix,
    },
    Tool {
        name: "date_add",
        description: "Add (or subtract, with negative numbers) years, months, weeks, days, hours, minutes and seconds to a date; month ends are clamped (Jan 31 + 1 month = Feb 28/29)",
        input_schema: r#"{"type":"object","properties":{"date":{"type":["string","number"]},"years":{"type":"integer"},"months":{"type":"integer"},"weeks":{"type":"integer"},"days":{"type":"integer"},"hours":{"type":"integer"},"minutes":{"type":"integer"},"seconds":{"type":"integer"},"offset":{"type":"string"}},"required":["date"]}"#,
        output_schema: DATE_OUT,
        annotations: r#"{"readOnlyHint":true,"idempotentHint":true}"#,
        handler: date_add,
    },
    Tool {
        name: "date_diff",
        description: "The time between two dates: total seconds and days, and calendar years/months/days",
        input_schema: r#"{"type":"object","properties":{"from":{"type":["string","number"]},"to":{"type":["string","number"]},"offset":{"type":"string"}},"required":["from","to"]}"#,
        output_schema: "",
        annotations: r#"{"readOnlyHint":true,"idempotentHint":true}"#,
        handler: date_diff,
    },
    Tool {
        name: "iso_week",
        description: "ISO 8601 week date (e.g. 2026-W48-7), weekday and day of year of a date",
        input_schema: r#"{"type":"object","properties":{"date":{"type":["string","number"]},"offset":{"type":"string"}},"required":["date"]}"#,
        output_schema: DATE_OUT,
        annotations: r#"{"readOnlyHint":true,"idempotentHint":true}"#,
        handler: iso_week,
    },
];

static PLUGIN: Plugin = Plugin {
    name: "rust-dates",
    version: "1.0.0",
    description: "Date and time utilities: Unix time, ISO 8601, date arithmetic, ISO weeks",
    tools: &TOOLS,
    capabilities: r#"{"config":["default_offset"]}"#,
    ..Plugin::EMPTY
};

#[no_mangle]
pub extern "C" fn wasmcp_call() -> u32 {
    run(&PLUGIN)
}
