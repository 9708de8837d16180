//! A component's core module in Rust, with the canonical ABI written by
//! hand (no bindings generator): see world.wit for the interface. Built
//! into rust-shapes.wasm by ../build.sh (Debian rustc for wasm32-wasi,
//! then jco-transpile's componentEmbed and componentNew with the WASI
//! preview 1 reactor adapter).

use std::alloc::{alloc, dealloc, realloc, Layout};

#[no_mangle]
pub unsafe extern "C" fn cabi_realloc(old: *mut u8, old_size: usize, align: usize, new_size: usize) -> *mut u8 {
    if new_size == 0 {
        return align as *mut u8;
    }
    let p = if old_size == 0 {
        alloc(Layout::from_size_align_unchecked(new_size, align))
    } else {
        realloc(old, Layout::from_size_align_unchecked(old_size, align), new_size)
    };
    if p.is_null() {
        std::process::abort();
    }
    p
}

/// The return area of functions whose results do not fit one value.
static mut RET: [u32; 4] = [0; 4];

unsafe fn ret_string(s: String) -> *mut u32 {
    let s = s.into_boxed_str();
    RET[0] = s.as_ptr() as u32;
    RET[1] = s.len() as u32;
    std::mem::forget(s);
    RET.as_mut_ptr()
}

unsafe fn free_string(r: *mut u32) {
    let (p, n) = (*r as usize, *r.add(1) as usize);
    if n > 0 {
        dealloc(p as *mut u8, Layout::from_size_align_unchecked(n, 1));
    }
}

unsafe fn take_string(p: *mut u8, n: usize) -> String {
    String::from_utf8_unchecked(Vec::from_raw_parts(p, n, n))
}

enum Shape {
    Circle(f64),
    Rect(f64, f64),
    None,
}

fn shape(tag: i32, a: f64, b: f64) -> Shape {
    match tag {
        0 => Shape::Circle(a),
        1 => Shape::Rect(a, b),
        _ => Shape::None,
    }
}

#[export_name = "wasmcp:rust-shapes/shapes@0.1.0#area"]
pub extern "C" fn area(tag: i32, a: f64, b: f64) -> f64 {
    match shape(tag, a, b) {
        Shape::Circle(r) => std::f64::consts::PI * r * r,
        Shape::Rect(w, h) => w * h,
        Shape::None => 0.0,
    }
}

#[export_name = "wasmcp:rust-shapes/shapes@0.1.0#describe"]
pub unsafe extern "C" fn describe(tag: i32, a: f64, b: f64, has_unit: i32, unit: i32, style: i32) -> *mut u32 {
    let u = match (has_unit, unit) {
        (0, _) => "",
        (_, 0) => " mm",
        _ => " cm",
    };
    let mut s = match shape(tag, a, b) {
        Shape::Circle(r) => format!("a circle of radius {}{}", r, u),
        Shape::Rect(w, h) => format!("a {}{} by {}{} rectangle", w, u, h, u),
        Shape::None => "nothing".to_string(),
    };
    if style & 1 != 0 {
        s = format!("**{}**", s);
    }
    if style & 2 != 0 {
        s = format!("_{}_", s);
    }
    ret_string(s)
}

#[export_name = "cabi_post_wasmcp:rust-shapes/shapes@0.1.0#describe"]
pub unsafe extern "C" fn describe_post(r: *mut u32) {
    free_string(r)
}

#[export_name = "wasmcp:rust-shapes/shapes@0.1.0#centroid"]
pub unsafe extern "C" fn centroid(p: *mut i32, n: usize) -> *mut u32 {
    let pts = Vec::from_raw_parts(p, 2 * n, 2 * n);
    RET[0] = (n > 0) as u32;
    if n > 0 {
        let (mut x, mut y) = (0i64, 0i64);
        for c in pts.chunks(2) {
            x += c[0] as i64;
            y += c[1] as i64;
        }
        RET[1] = (x / n as i64) as i32 as u32;
        RET[2] = (y / n as i64) as i32 as u32;
    }
    drop(pts);
    RET.as_mut_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn reverse(p: *mut u8, n: usize) -> *mut u32 {
    let s = take_string(p, n);
    ret_string(s.chars().rev().collect())
}

#[export_name = "cabi_post_reverse"]
pub unsafe extern "C" fn reverse_post(r: *mut u32) {
    free_string(r)
}
