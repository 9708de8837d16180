//! A component's core module in Rust using std::fs, which reaches the
//! host's wasi:filesystem through the WASI preview 1 adapter: see
//! world.wit. The canonical ABI is written by hand, as in ../rust-shapes;
//! results are not freed (no post-return), which a test fixture can
//! afford. Built into rust-files.wasm by ../build.sh.

use std::alloc::{alloc, realloc, Layout};

extern "C" {
    fn __wasm_call_ctors();
}

static mut CTORS_RUN: bool = false;

/// Runs the constructors (wasi-libc's, which read the preopens) once, at
/// the start of an export, as wit-bindgen's run_ctors_once does: calling
/// __wasm_call_ctors keeps wasm-ld from wrapping every export, realloc
/// included, with the constructors, which would call WASI from realloc
/// while the host lowers arguments, a trap by the canonical ABI.
unsafe fn run_ctors_once() {
    if !CTORS_RUN {
        CTORS_RUN = true;
        __wasm_call_ctors();
    }
}

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

/// The return area: a result's tag (a byte, at 0) and its payload (a
/// pointer and a length, at 4 and 8).
static mut RET: [u32; 3] = [0; 3];

unsafe fn take_string(p: *mut u8, n: usize) -> String {
    String::from_utf8_unchecked(Vec::from_raw_parts(p, n, n))
}

fn leak_str(s: String) -> (u32, u32) {
    let s = s.into_boxed_str();
    let r = (s.as_ptr() as u32, s.len() as u32);
    std::mem::forget(s);
    r
}

unsafe fn ret(ok: bool, p: u32, n: u32) -> *mut u32 {
    RET[0] = if ok { 0 } else { 1 };
    RET[1] = p;
    RET[2] = n;
    std::ptr::addr_of_mut!(RET) as *mut u32
}

unsafe fn ret_err(e: std::io::Error) -> *mut u32 {
    let (p, n) = leak_str(e.to_string());
    ret(false, p, n)
}

#[export_name = "read-file"]
pub unsafe extern "C" fn read_file(p: *mut u8, n: usize) -> *mut u32 {
    run_ctors_once();
    match std::fs::read_to_string(take_string(p, n)) {
        Ok(s) => {
            let (p, n) = leak_str(s);
            ret(true, p, n)
        }
        Err(e) => ret_err(e),
    }
}

#[export_name = "list-dir"]
pub unsafe extern "C" fn list_dir(p: *mut u8, n: usize) -> *mut u32 {
    run_ctors_once();
    let entries = match std::fs::read_dir(take_string(p, n)) {
        Ok(d) => d,
        Err(e) => return ret_err(e),
    };
    let mut names = Vec::new();
    for e in entries {
        match e {
            Ok(e) => names.push(e.file_name().to_string_lossy().into_owned()),
            Err(e) => return ret_err(e),
        }
    }
    names.sort();
    let pairs: Vec<[u32; 2]> = names
        .into_iter()
        .map(|s| {
            let (p, n) = leak_str(s);
            [p, n]
        })
        .collect();
    let pairs = pairs.into_boxed_slice();
    let r = ret(true, pairs.as_ptr() as u32, pairs.len() as u32);
    std::mem::forget(pairs);
    r
}

#[export_name = "write-file"]
pub unsafe extern "C" fn write_file(p: *mut u8, n: usize, tp: *mut u8, tn: usize) -> *mut u32 {
    run_ctors_once();
    match std::fs::write(take_string(p, n), take_string(tp, tn)) {
        Ok(()) => ret(true, 0, 0),
        Err(e) => ret_err(e),
    }
}
