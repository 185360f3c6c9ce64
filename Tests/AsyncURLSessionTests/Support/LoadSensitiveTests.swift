import Testing

/// Suites that move hundreds of megabytes, or that time things, run one test
/// at a time: a 1 GiB transfer beside a 1-second idle-timeout test on a
/// 2-core machine would make the timing test fail for the wrong reason.
/// Everything else runs in parallel beside them.
@Suite(.serialized) struct LoadSensitiveTests {}
