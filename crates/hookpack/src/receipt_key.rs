//! What makes an install receipt the user's own: a keyed digest (HMAC-SHA-256, RFC 2104) of
//! what it says, with a key of 32 random bytes kept in the user's hookpack folder
//! (`state/receipt.key`, mode 600, created on first use). A repository can commit a receipt,
//! never one whose digest holds: it does not have the key.
//!
//! SHA-256 is written out here (FIPS 180-4) rather than taken from a crate: it is 60 lines,
//! and checked against the standard's vectors below.

use std::fmt::Write as _;
use std::io::Read as _;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};

use hook_runtime::confined::Confined;
use hook_runtime::{Env, Installation};

/// The key's file, in the user folder's `state/`.
const KEY_FILE: &str = "receipt.key";

/// The key's length in bytes.
const KEY_BYTES: usize = 32;

/// The user's receipt key: read from their hookpack folder, or made there on first use.
///
/// # Errors
///
/// Why there is none: no user folder, the file is not the user's own (a link, another
/// owner, readable by others, not 32 bytes), or it cannot be made.
pub(crate) fn key() -> Result<[u8; KEY_BYTES], String> {
    let dir = Env::from_process().user_config_dir().ok_or("no HOME or XDG_CONFIG_HOME")?;
    std::fs::create_dir_all(&dir).map_err(|err| format!("{}: {err}", dir.display()))?;
    let state = Confined::of(&Installation::User { dir })
        .dir(hook_engine::layout::STATE_DIR)
        .map_err(|err| format!("the user's state folder: {err}"))?;
    let path = state.entry(KEY_FILE).map_err(|err| err.to_string())?;
    match std::fs::symlink_metadata(&path) {
        Ok(_) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            let mut key = [0; KEY_BYTES];
            std::fs::File::open("/dev/urandom")
                .and_then(|mut random| random.read_exact(&mut key))
                .map_err(|err| format!("/dev/urandom: {err}"))?;
            match state.create_new_with_mode(KEY_FILE, 0o600) {
                Ok(mut file) => {
                    std::io::Write::write_all(&mut file, &key)
                        .map_err(|err| format!("{}: {err}", path.display()))?;
                    return Ok(key);
                }
                // Made by another hookpack meanwhile: read as any.
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(format!("{}: {err}", path.display())),
            }
        }
        Err(err) => return Err(format!("{}: {err}", path.display())),
    }
    let meta = std::fs::symlink_metadata(&path).map_err(|err| err.to_string())?;
    // The owner of the user's own folder (hookpack made it, as this user) is the user.
    let owner = std::fs::metadata(state.path()).map_err(|err| err.to_string())?.uid();
    let own = meta.file_type().is_file()
        && meta.uid() == owner
        && meta.permissions().mode() & 0o777 == 0o600
        && meta.len() == KEY_BYTES as u64;
    if !own {
        return Err(format!(
            "{} is not a file of {KEY_BYTES} bytes of yours that only you can read (mode 600)",
            path.display()
        ));
    }
    let bytes = hook_engine::bounded::read_regular(&path, KEY_BYTES as u64)
        .map_err(|err| format!("{}: {err}", path.display()))?;
    bytes.try_into().map_err(|_| format!("{} is not {KEY_BYTES} bytes", path.display()))
}

/// The HMAC-SHA-256 of `parts` under `key`, each part's length written before it (so that no
/// two lists of parts give the same message), in hex.
pub(crate) fn digest(key: &[u8; KEY_BYTES], parts: &[&[u8]]) -> String {
    let mut message = Vec::new();
    for part in parts {
        message.extend_from_slice(&(part.len() as u64).to_be_bytes());
        message.extend_from_slice(part);
    }
    hex(&hmac(key, &message))
}

/// `bytes` in lowercase hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// HMAC-SHA-256 (RFC 2104) with a key of at most 64 bytes.
fn hmac(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0_u8; 64];
    block[..key.len()].copy_from_slice(key);
    let mut inner: Vec<u8> = block.iter().map(|b| b ^ 0x36).collect();
    inner.extend_from_slice(message);
    let mut outer: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
    outer.extend_from_slice(&sha256(&inner));
    sha256(&outer)
}

const K: [u32; 64] = [
    0x428a_2f98,
    0x7137_4491,
    0xb5c0_fbcf,
    0xe9b5_dba5,
    0x3956_c25b,
    0x59f1_11f1,
    0x923f_82a4,
    0xab1c_5ed5,
    0xd807_aa98,
    0x1283_5b01,
    0x2431_85be,
    0x550c_7dc3,
    0x72be_5d74,
    0x80de_b1fe,
    0x9bdc_06a7,
    0xc19b_f174,
    0xe49b_69c1,
    0xefbe_4786,
    0x0fc1_9dc6,
    0x240c_a1cc,
    0x2de9_2c6f,
    0x4a74_84aa,
    0x5cb0_a9dc,
    0x76f9_88da,
    0x983e_5152,
    0xa831_c66d,
    0xb003_27c8,
    0xbf59_7fc7,
    0xc6e0_0bf3,
    0xd5a7_9147,
    0x06ca_6351,
    0x1429_2967,
    0x27b7_0a85,
    0x2e1b_2138,
    0x4d2c_6dfc,
    0x5338_0d13,
    0x650a_7354,
    0x766a_0abb,
    0x81c2_c92e,
    0x9272_2c85,
    0xa2bf_e8a1,
    0xa81a_664b,
    0xc24b_8b70,
    0xc76c_51a3,
    0xd192_e819,
    0xd699_0624,
    0xf40e_3585,
    0x106a_a070,
    0x19a4_c116,
    0x1e37_6c08,
    0x2748_774c,
    0x34b0_bcb5,
    0x391c_0cb3,
    0x4ed8_aa4a,
    0x5b9c_ca4f,
    0x682e_6ff3,
    0x748f_82ee,
    0x78a5_636f,
    0x84c8_7814,
    0x8cc7_0208,
    0x90be_fffa,
    0xa450_6ceb,
    0xbef9_a3f7,
    0xc671_78f2,
];

/// SHA-256 (FIPS 180-4) of `data`, with the standard's names for its variables.
#[allow(clippy::many_single_char_names, reason = "the standard's names")]
fn sha256(data: &[u8]) -> [u8; 32] {
    let mut h: [u32; 8] = [
        0x6a09_e667,
        0xbb67_ae85,
        0x3c6e_f372,
        0xa54f_f53a,
        0x510e_527f,
        0x9b05_688c,
        0x1f83_d9ab,
        0x5be0_cd19,
    ];
    let mut padded = data.to_vec();
    padded.push(0x80);
    while padded.len() % 64 != 56 {
        padded.push(0);
    }
    padded.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_be_bytes());
    for block in padded.chunks_exact(64) {
        let mut w = [0_u32; 64];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh.wrapping_add(s1).wrapping_add(ch).wrapping_add(K[i]).wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            (hh, g, f, e, d, c, b, a) = (g, f, e, d.wrapping_add(t1), c, b, a, t1.wrapping_add(t2));
        }
        for (word, add) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *word = word.wrapping_add(add);
        }
    }
    let mut out = [0; 32];
    for (bytes, word) in out.chunks_exact_mut(4).zip(h) {
        bytes.copy_from_slice(&word.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_and_hmac_give_the_standards_vectors() {
        assert_eq!(
            hex(&sha256(b"")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            hex(&sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            hex(&sha256(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            hex(&sha256(&[b'a'; 1000])),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
        );
        // RFC 4231, test cases 1 and 2.
        assert_eq!(
            hex(&hmac(&[0x0b; 20], b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hex(&hmac(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Parts are told apart by their lengths.
        let key = [7; KEY_BYTES];
        assert_ne!(digest(&key, &[b"ab", b"c"]), digest(&key, &[b"a", b"bc"]));
    }
}
