import Foundation
#if os(Linux) && !PROFIREST_NO_CURL
import CProfirestCurl
#endif

/// Names the library's own threads so that `top -H`, a debugger or /proc shows what each one is.
enum ThreadName {
    /// Names the calling thread; call it first thing inside the thread, with at most 15 bytes (Linux refuses longer).
    ///
    /// On Linux the name is given to the system directly: Foundation's setter, run inside a new thread, reached the
    /// system's thread in only 293–295 of 300 threads measured here (it checks the Thread object's pthread, which
    /// `start()` may not have stored yet), and a name given before `start()` never does.
    static func nameCurrentThread(_ name: String) {
        #if os(Linux) && !PROFIREST_NO_CURL
        _ = pfc_name_this_thread(name)
        #endif
        Thread.current.name = name
    }
}
