//! Token estimates for what is not text: images, PDFs, audio and opaque (encrypted) payloads.
//!
//! None of these is ever tokenized as base64 text. Each estimate follows the provider's
//! documented billing rule where there is one, reading only the file's header (image size,
//! PDF page objects, audio duration); where the header cannot be read, a documented default
//! stands in, chosen on the high side so that a compaction trigger is never late.

use base64::Engine;

/// Tokens Anthropic bills for an image it cannot size: its largest image
/// (≈ 1.15 megapixels / 750).
pub const UNKNOWN_IMAGE_TOKENS: usize = 1_600;
/// Tokens for each PDF page (Anthropic bills text plus a page image: 1.5K–3K a page; OpenAI
/// also gives the model both the extracted text and an image of each page).
pub const PDF_PAGE_TOKENS: usize = 2_000;

/// OpenAI's flat cost of an image sent with `detail: "low"`, and the base added to every
/// `high` image (GPT-4o / GPT-4.1 / o-series, "Calculating costs" in the vision guide).
pub const OPENAI_IMAGE_BASE_TOKENS: usize = 85;
/// OpenAI's cost of each 512 px tile of a `detail: "high"` image.
pub const OPENAI_IMAGE_TILE_TOKENS: usize = 170;
/// OpenAI's largest `high` image: 768 × 2048 after scaling, 2 × 4 tiles.
pub const OPENAI_UNKNOWN_IMAGE_TOKENS: usize =
    OPENAI_IMAGE_BASE_TOKENS + 8 * OPENAI_IMAGE_TILE_TOKENS;

/// Audio tokens per second in a user message: OpenAI bills 1 token per 100 ms of input audio
/// (Realtime API cost guide; the Chat Completions audio models use the same audio tokens).
pub const AUDIO_INPUT_TOKENS_PER_SECOND: f64 = 10.0;
/// Audio tokens per second in an assistant message: 1 token per 50 ms.
pub const AUDIO_OUTPUT_TOKENS_PER_SECOND: f64 = 20.0;
/// The byte rate assumed for audio whose header cannot be read: 128 kbit/s, a common MP3
/// rate. Uncompressed WAV is 2–11× denser, so for WAV this errs on the high side.
pub const ASSUMED_AUDIO_BYTES_PER_SECOND: f64 = 16_000.0;
/// An assistant `audio: {id}` reference to an earlier spoken reply that is not in the
/// request: 30 seconds of assistant audio (1 token per 50 ms).
pub const UNKNOWN_ASSISTANT_AUDIO_TOKENS: usize = 600;

/// Base64 characters per token of opaque content (`redacted_thinking.data`, search results'
/// `encrypted_content`, `encrypted_stdout`, …). The API decrypts and bills the plaintext,
/// which we cannot see. Authenticated encryption adds only a fixed few dozen bytes, so the
/// decoded size is about the plaintext size; text averages ≈ 4 bytes a token, and we count
/// one token per 3 decoded bytes (= 4 base64 characters) to leave room for a plaintext that
/// was compressed before encryption.
pub const OPAQUE_BASE64_CHARS_PER_TOKEN: usize = 4;

/// The estimate for an opaque base64 payload (see [`OPAQUE_BASE64_CHARS_PER_TOKEN`]).
pub fn opaque_tokens(data: &str) -> usize {
    data.trim_end_matches('=')
        .len()
        .div_ceil(OPAQUE_BASE64_CHARS_PER_TOKEN)
}

/// The payload of a `data:` URL (`data:<type>;base64,<payload>`), or the text itself.
pub fn strip_data_url(text: &str) -> &str {
    match text.strip_prefix("data:") {
        Some(rest) => rest.split_once(',').map_or(rest, |(_, data)| data),
        None => text,
    }
}

const BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD_NO_PAD;

/// The number of bytes base64 `data` decodes to.
fn base64_decoded_len(data: &str) -> usize {
    data.trim_end_matches('=').len() * 3 / 4
}

/// About `len` bytes of base64 `data` from byte `start` on, decoded without decoding the
/// rest, and the offset of the first returned byte (`start` rounded down to a multiple of 3).
fn base64_window(data: &str, start: usize, len: usize) -> Option<(usize, Vec<u8>)> {
    let data = data.trim_end_matches('=');
    let first = start / 3;
    let char_start = (first * 4).min(data.len());
    // One quantum more than `len` needs: `start` may sit up to 2 bytes into the first one.
    let mut char_end = (char_start + (len + 3).div_ceil(3) * 4).min(data.len());
    if char_end < data.len() {
        char_end = char_start + (char_end - char_start) / 4 * 4;
    }
    let bytes = BASE64.decode(data.get(char_start..char_end)?).ok()?;
    Some((first * 3, bytes))
}

// ---------------------------------------------------------------------------------------
// Images

/// Anthropic's image cost: images are downscaled so the long edge is at most 1568 px and the
/// area at most ≈ 1.15 megapixels, then cost width × height / 750 tokens.
pub fn image_tokens(width: usize, height: usize) -> usize {
    if width == 0 || height == 0 {
        return 0;
    }
    let (w, h) = (width as f64, height as f64);
    let scale = 1f64
        .min(1568.0 / w.max(h))
        .min((1_150_000.0 / (w * h)).sqrt());
    let (w, h) = ((w * scale).floor(), (h * scale).floor());
    ((w * h) / 750.0).ceil() as usize
}

/// OpenAI's image cost (the tile rule of GPT-4o, GPT-4.1 and the o-series): `low` detail is a
/// flat 85 tokens; `high` (and `auto`, counted as `high`, its upper bound) scales the image to
/// fit in 2048 × 2048, then so that its short side is at most 768 px, and costs 170 tokens per
/// 512 px tile plus 85. Images are only ever scaled down.
pub fn openai_image_tokens(width: usize, height: usize, detail: Option<&str>) -> usize {
    if detail == Some("low") {
        return OPENAI_IMAGE_BASE_TOKENS;
    }
    if width == 0 || height == 0 {
        return OPENAI_IMAGE_BASE_TOKENS;
    }
    let (mut w, mut h) = (width as f64, height as f64);
    let fit = (2048.0 / w.max(h)).min(1.0);
    (w, h) = (w * fit, h * fit);
    let short = (768.0 / w.min(h)).min(1.0);
    (w, h) = ((w * short).floor(), (h * short).floor());
    let tiles = (w / 512.0).ceil() as usize * (h / 512.0).ceil() as usize;
    OPENAI_IMAGE_BASE_TOKENS + tiles * OPENAI_IMAGE_TILE_TOKENS
}

/// The pixel size in the header of a base64 image (PNG, GIF, WebP, JPEG, …).
pub fn base64_image_size(data: &str) -> Option<(usize, usize)> {
    // The size sits in the first bytes for PNG, GIF and WebP; JPEG's size marker can follow
    // large EXIF blocks, so decode everything only when the short prefix was not enough.
    let data = data.trim_end_matches('=');
    let prefix = &data[..data.len().min(4_096)];
    let prefix = &prefix[..prefix.len() / 4 * 4];
    BASE64
        .decode(prefix)
        .ok()
        .and_then(|bytes| imagesize::blob_size(&bytes).ok())
        .or_else(|| {
            (data.len() > prefix.len())
                .then(|| BASE64.decode(data).ok())
                .flatten()
                .and_then(|bytes| imagesize::blob_size(&bytes).ok())
        })
        .map(|size| (size.width, size.height))
}

/// The pixel size of an image given as a `data:` URL; `None` for a remote URL.
pub fn data_url_image_size(url: &str) -> Option<(usize, usize)> {
    url.starts_with("data:")
        .then(|| base64_image_size(strip_data_url(url)))
        .flatten()
}

// ---------------------------------------------------------------------------------------
// PDFs

/// A base64 PDF: [`PDF_PAGE_TOKENS`] per page object; a file whose pages cannot be found
/// counts its decoded size at 4 bytes a token, at least one page.
pub fn pdf_tokens(data: &str) -> usize {
    let Ok(bytes) = BASE64.decode(data.trim_end_matches('=')) else {
        return PDF_PAGE_TOKENS;
    };
    // Count page objects ("/Type /Page", not "/Type /Pages").
    let mut pages = 0;
    let needle = b"/Type";
    let mut i = 0;
    while i + needle.len() < bytes.len() {
        if &bytes[i..i + needle.len()] == needle {
            let mut j = i + needle.len();
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            if bytes[j..].starts_with(b"/Page") && bytes.get(j + 5) != Some(&b's') {
                pages += 1;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    if pages > 0 {
        pages * PDF_PAGE_TOKENS
    } else {
        (bytes.len() / 4).max(PDF_PAGE_TOKENS)
    }
}

// ---------------------------------------------------------------------------------------
// Audio

/// Tokens for base64 audio at `tokens_per_second`: its duration from the WAV or MP3 header,
/// else its size at [`ASSUMED_AUDIO_BYTES_PER_SECOND`].
pub fn audio_tokens(data: &str, tokens_per_second: f64) -> usize {
    let data = strip_data_url(data);
    let total = base64_decoded_len(data);
    if total == 0 {
        return 0;
    }
    let seconds =
        audio_seconds(data, total).unwrap_or(total as f64 / ASSUMED_AUDIO_BYTES_PER_SECOND);
    (seconds * tokens_per_second).ceil() as usize
}

/// The duration of base64 audio of `total` decoded bytes, from its header.
fn audio_seconds(data: &str, total: usize) -> Option<f64> {
    let (_, head) = base64_window(data, 0, 4_096)?;
    if head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WAVE") {
        return wav_seconds(&head, total);
    }
    // MP3: an optional ID3v2 tag (which may hold cover art), then MPEG audio frames.
    let mut frame_start = 0;
    if head.starts_with(b"ID3") && head.len() >= 10 {
        let size = head[6..10]
            .iter()
            .fold(0usize, |size, &b| size << 7 | (b & 0x7F) as usize);
        let footer = if head[5] & 0x10 != 0 { 10 } else { 0 };
        frame_start = 10 + size + footer;
    }
    let (offset, window) = if frame_start + 256 <= head.len() {
        (0, head)
    } else {
        base64_window(data, frame_start, 4_096)?
    };
    // The first frame header at or after the tag (a few junk bytes may precede it).
    let from = frame_start.checked_sub(offset)?;
    let found =
        (from..window.len().saturating_sub(4)).find(|&i| mp3_frame(&window[i..]).is_some())?;
    let frame = mp3_frame(&window[found..])?;
    if let Some(frames) = xing_frames(&window[found..], &frame) {
        return Some(frames as f64 * frame.samples as f64 / frame.sample_rate as f64);
    }
    // Constant bit rate: the audio bytes at the first frame's bit rate.
    let audio_bytes = total.saturating_sub(offset + found);
    Some(audio_bytes as f64 * 8.0 / (frame.kbps as f64 * 1000.0))
}

/// A WAV file's duration: the `data` chunk's size over the `fmt ` chunk's byte rate (the
/// rest of the file when the data chunk is not in the header window or its size is unset).
fn wav_seconds(head: &[u8], total: usize) -> Option<f64> {
    let u32_at = |i: usize| {
        head.get(i..i + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
    };
    let mut byte_rate = None;
    let mut data_bytes = None;
    let mut i = 12;
    while i + 8 <= head.len() {
        let id = &head[i..i + 4];
        let size = u32_at(i + 4)?;
        if id == b"fmt " {
            byte_rate = u32_at(i + 16);
        } else if id == b"data" {
            let rest = total.saturating_sub(i + 8);
            data_bytes = Some(if size == 0 || size > rest { rest } else { size });
            break;
        }
        i += 8 + size + (size & 1);
    }
    let byte_rate = byte_rate.filter(|&rate| rate > 0)?;
    Some(data_bytes.unwrap_or(total) as f64 / byte_rate as f64)
}

/// What an MPEG audio Layer III frame header says.
struct Mp3Frame {
    kbps: usize,
    sample_rate: usize,
    /// Samples per frame.
    samples: usize,
    /// Bytes from the frame start to the Xing/Info tag (header + side information).
    xing_offset: usize,
}

fn mp3_frame(bytes: &[u8]) -> Option<Mp3Frame> {
    let &[b0, b1, b2, b3, ..] = bytes else {
        return None;
    };
    // Sync (11 bits), version (2: MPEG-1 = 3, MPEG-2 = 2, MPEG-2.5 = 0), layer III (1).
    if b0 != 0xFF || b1 & 0xE0 != 0xE0 || (b1 >> 1) & 3 != 1 {
        return None;
    }
    let version = (b1 >> 3) & 3;
    let mpeg1 = match version {
        3 => true,
        2 | 0 => false,
        _ => return None,
    };
    const MPEG1_KBPS: [usize; 15] = [
        0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320,
    ];
    const MPEG2_KBPS: [usize; 15] = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
    let kbps = *if mpeg1 { &MPEG1_KBPS } else { &MPEG2_KBPS }.get((b2 >> 4) as usize)?;
    let base_rate = *[44_100, 48_000, 32_000].get(((b2 >> 2) & 3) as usize)?;
    let sample_rate = match version {
        3 => base_rate,
        2 => base_rate / 2,
        _ => base_rate / 4,
    };
    let mono = b3 >> 6 == 3;
    let side_info = match (mpeg1, mono) {
        (true, false) => 32,
        (true, true) | (false, false) => 17,
        (false, true) => 9,
    };
    (kbps > 0).then_some(Mp3Frame {
        kbps,
        sample_rate,
        samples: if mpeg1 { 1152 } else { 576 },
        xing_offset: 4 + side_info,
    })
}

/// The frame count of a variable-bit-rate file's Xing/Info tag, if the first frame holds one.
fn xing_frames(frame_bytes: &[u8], frame: &Mp3Frame) -> Option<usize> {
    let tag = frame_bytes.get(frame.xing_offset..frame.xing_offset + 12)?;
    if &tag[..4] != b"Xing" && &tag[..4] != b"Info" {
        return None;
    }
    let flags = u32::from_be_bytes(tag[4..8].try_into().ok()?);
    (flags & 1 != 0)
        .then(|| u32::from_be_bytes(tag[8..12].try_into().expect("4 bytes")) as usize)
        .filter(|&frames| frames > 0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// A PCM WAV file: 44-byte header, then `seconds` of silence.
    pub(crate) fn wav(sample_rate: u32, channels: u16, seconds: u32) -> Vec<u8> {
        let byte_rate = sample_rate * channels as u32 * 2;
        let data_len = byte_rate * seconds;
        let mut wav = b"RIFF".to_vec();
        wav.extend_from_slice(&(36 + data_len).to_le_bytes());
        wav.extend_from_slice(b"WAVEfmt ");
        wav.extend_from_slice(&16u32.to_le_bytes());
        wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
        wav.extend_from_slice(&channels.to_le_bytes());
        wav.extend_from_slice(&sample_rate.to_le_bytes());
        wav.extend_from_slice(&byte_rate.to_le_bytes());
        wav.extend_from_slice(&(channels * 2).to_le_bytes());
        wav.extend_from_slice(&16u16.to_le_bytes());
        wav.extend_from_slice(b"data");
        wav.extend_from_slice(&data_len.to_le_bytes());
        wav.resize(44 + data_len as usize, 0);
        wav
    }

    /// A constant-bit-rate MP3: an ID3v2 tag of `tag_len` bytes, then 128 kbit/s 44.1 kHz
    /// stereo frames (417 bytes each, 1152 samples) for about `seconds`.
    pub(crate) fn mp3(tag_len: usize, seconds: usize) -> Vec<u8> {
        let mut mp3 = b"ID3\x04\x00\x00".to_vec();
        let size = tag_len - 10;
        mp3.extend((0..4).rev().map(|i| ((size >> (7 * i)) & 0x7F) as u8));
        mp3.resize(tag_len, 0);
        let frame_len = 417;
        let audio_len = seconds * 16_000;
        while mp3.len() < tag_len + audio_len {
            let start = mp3.len();
            mp3.extend_from_slice(&[0xFF, 0xFB, 0x90, 0x64]);
            mp3.resize(start + frame_len, 0);
        }
        mp3.truncate(tag_len + audio_len);
        mp3
    }

    #[test]
    fn wav_duration_comes_from_its_header() {
        // 24 kHz mono 16-bit: 48 000 bytes a second.
        let data = b64(&wav(24_000, 1, 3));
        assert_eq!(audio_tokens(&data, AUDIO_INPUT_TOKENS_PER_SECOND), 30);
        assert_eq!(audio_tokens(&data, AUDIO_OUTPUT_TOKENS_PER_SECOND), 60);
    }

    #[test]
    fn mp3_duration_comes_from_its_frames_even_after_a_large_tag() {
        for tag_len in [10 + 22, 10 + 200_000] {
            let data = b64(&mp3(tag_len, 5));
            assert_eq!(audio_tokens(&data, AUDIO_INPUT_TOKENS_PER_SECOND), 50);
        }
        // A VBR file's Xing tag gives the frame count: 383 frames × 1152 / 44 100 ≈ 10.005 s.
        let mut vbr = vec![0xFF, 0xFB, 0x90, 0x64];
        vbr.resize(36, 0);
        vbr.extend_from_slice(b"Xing");
        vbr.extend_from_slice(&1u32.to_be_bytes());
        vbr.extend_from_slice(&383u32.to_be_bytes());
        vbr.resize(3_000, 0);
        assert_eq!(audio_tokens(&b64(&vbr), AUDIO_INPUT_TOKENS_PER_SECOND), 101);
    }

    #[test]
    fn unreadable_audio_counts_its_size() {
        let data = b64(&vec![7u8; 48_000]);
        assert_eq!(audio_tokens(&data, AUDIO_INPUT_TOKENS_PER_SECOND), 30);
        assert_eq!(audio_tokens("", AUDIO_INPUT_TOKENS_PER_SECOND), 0);
    }

    #[test]
    fn openai_image_costs_follow_the_documented_examples() {
        // The vision guide's examples.
        assert_eq!(openai_image_tokens(1024, 1024, Some("high")), 765);
        assert_eq!(openai_image_tokens(2048, 4096, Some("high")), 1105);
        assert_eq!(openai_image_tokens(4096, 8192, Some("low")), 85);
        assert_eq!(openai_image_tokens(512, 512, None), 255);
        assert_eq!(
            openai_image_tokens(768, 2048, Some("auto")),
            OPENAI_UNKNOWN_IMAGE_TOKENS
        );
    }

    #[test]
    fn base64_windows_decode_the_bytes_asked_for() {
        let bytes: Vec<u8> = (0..=255).cycle().take(10_000).collect();
        let data = b64(&bytes);
        for (start, len) in [(0, 10), (7, 100), (9_990, 100), (3_000, 4_096)] {
            let (offset, window) = base64_window(&data, start, len).unwrap();
            assert!(offset <= start && start - offset < 3);
            assert_eq!(window[..], bytes[offset..offset + window.len()]);
            assert!(offset + window.len() >= (start + len).min(bytes.len()));
        }
        assert_eq!(base64_decoded_len(&data), 10_000);
        assert_eq!(strip_data_url("data:audio/wav;base64,QUJD"), "QUJD");
        assert_eq!(strip_data_url("QUJD"), "QUJD");
    }
}
