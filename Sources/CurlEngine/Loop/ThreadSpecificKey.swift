import Glibc

/// A new pthread key for a value each thread keeps for itself, without a
/// destructor (what is stored is never memory to free). Keys live as long as
/// the process: each is made once, for a `static let`.
enum ThreadSpecificKey {
    static func make() -> pthread_key_t {
        var key = pthread_key_t()
        let created = pthread_key_create(&key, nil)
        precondition(created == 0, "pthread_key_create failed: \(created)")
        return key
    }
}
