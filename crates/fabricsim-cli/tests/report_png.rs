//! `report.html` as a reader sees it: a run of `scenarios/incast-pfc.toml` (cut to 10 ms, as in the goldens),
//! its multi-run report and one run's report rendered by headless Chromium to PNG, and
//! the pictures checked to be charts, not blank pages: enough non-white pixels, many
//! colours, and the palette's first series colour present (bars were drawn).
//!
//! Skipped, with a message, when no Chromium is installed (`FABRICSIM_CHROMIUM` names
//! one elsewhere).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FABRICSIM_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// Renders `html` to `png` at 1200 px wide; false when Chromium fails or hangs.
fn screenshot(browser: &Path, html: &Path, png: &Path) -> bool {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1200,3000")
        .arg(format!("file://{}", html.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.success() && png.exists();
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// (width, height, RGB pixels) of a PNG.
fn decode(png: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(std::fs::File::open(png).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "8-bit screenshot");
    let step = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    let px = buf[..info.buffer_size()]
        .chunks_exact(step)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (info.width, info.height, px)
}

fn check_picture(png: &Path) {
    let (w, h, px) = decode(png);
    assert_eq!((w, h), (1200, 3000), "{}", png.display());
    let non_white = px.iter().filter(|p| p.iter().any(|&c| c < 235)).count();
    let frac = non_white as f64 / px.len() as f64;
    // Text alone covers a few per cent; filled bars and tables add more.
    assert!(
        frac > 0.03,
        "{}: only {frac:.4} of pixels not white",
        png.display()
    );
    let mut colours: Vec<[u8; 3]> = px.iter().map(|p| p.map(|c| c & 0xF0)).collect();
    colours.sort_unstable();
    colours.dedup();
    assert!(
        colours.len() > 20,
        "{}: {} colours",
        png.display(),
        colours.len()
    );
    // The first series colour (Okabe-Ito blue #0072B2) fills bars or draws lines.
    let blue = px
        .iter()
        .filter(|p| p[0] < 16 && (104..=124).contains(&p[1]) && (168..=188).contains(&p[2]))
        .count();
    assert!(
        blue > 500,
        "{}: {blue} pixels of series blue",
        png.display()
    );
}

#[test]
fn reports_render_to_non_blank_pictures() {
    let Some(browser) = chromium() else {
        eprintln!(
            "SKIPPED reports_render_to_non_blank_pictures: no Chromium found \
             (/usr/bin/chromium; set FABRICSIM_CHROMIUM to use another)"
        );
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/incast-pfc.toml");
    let status = Command::new(env!("CARGO_BIN_EXE_fabricsim"))
        .arg("run")
        .arg(&scenario)
        .args(["--quiet", "--set", "max_time=\"10ms\"", "--out"])
        .arg(out.path())
        .status()
        .unwrap();
    assert!(status.success());
    for html in [
        out.path().join("report.html"),
        out.path().join("pfc_dcqcn").join("report.html"),
    ] {
        assert!(html.exists(), "{}", html.display());
        let png = html.with_extension("png");
        assert!(
            screenshot(&browser, &html, &png),
            "chromium could not render {}",
            html.display()
        );
        check_picture(&png);
    }
}
