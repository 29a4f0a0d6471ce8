//! `BlockDevice::open` on a real block device (root tier): the device is claimed with
//! `O_NOATIME`, so reads through it skip `touch_atime` as fio's do.

use weir_engine::blockdev::BlockDevice;

#[test]
fn a_device_opened_by_root_skips_atime() {
    let test = "a_device_opened_by_root_skips_atime";
    let Some(root) = weir_testfs::require_root(test) else {
        return;
    };
    let Some(zram) = weir_testfs::Zram::create(&root, test, "16M") else {
        return;
    };
    let dev = BlockDevice::open(zram.path()).expect("open the zram device");
    // SAFETY: F_GETFL reads the open file's status flags; the fd is open for the call.
    let flags = unsafe { libc::fcntl(dev.fd(), libc::F_GETFL) };
    assert!(flags >= 0, "F_GETFL failed");
    assert_ne!(
        flags & libc::O_NOATIME,
        0,
        "flags {flags:#o} lack O_NOATIME"
    );
    assert_ne!(flags & libc::O_DIRECT, 0, "flags {flags:#o} lack O_DIRECT");
}
