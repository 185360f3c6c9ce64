// The program as its own transfer agent (issue 44): a background session
// that finds no agent program starts this program again with
// ASYNCURLSESSION_RUN_AS_AGENT=1, and this constructor runs the agent
// (BackgroundAgent's `asyncurlsession_run_as_agent`) before the program's
// main, which never runs in that process.
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "CAgentBoot.h"

// Defined in BackgroundAgent (@_cdecl); weak, since this target cannot
// depend on it: null in a program that does not link it.
extern void asyncurlsession_run_as_agent(void) __attribute__((weak));

typedef void (*asyncurlsession_init_fn)(int, char **, char **);
// The linker's bounds of this module's .init_array (hidden: this module's own).
extern asyncurlsession_init_fn __init_array_start[] __attribute__((weak, visibility("hidden")));
extern asyncurlsession_init_fn __init_array_end[] __attribute__((weak, visibility("hidden")));

// 1 when `data` (an address) lies in the first object, the main program.
static int asyncurlsession_in_main_program(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    uintptr_t address = (uintptr_t)data;
    for (ElfW(Half) index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        if (header->p_type != PT_LOAD) continue;
        uintptr_t start = info->dlpi_addr + header->p_vaddr;
        if (address >= start && address - start < header->p_memsz) return 1;
    }
    return 2;  // not in it: stop after the main program
}

// Only when this code is in the program itself: in a library loaded with
// dlopen, /proc/self/exe started again would run its host's main instead.
int asyncurlsession_self_agent_available(void) {
    if (asyncurlsession_run_as_agent == 0) return 0;
    return dl_iterate_phdr(asyncurlsession_in_main_program, (void *)(uintptr_t)&asyncurlsession_self_agent_available) == 1;
}

__attribute__((constructor, used))
static void asyncurlsession_agent_boot(int argc, char **argv, char **envp) {
    const char *mode = getenv("ASYNCURLSESSION_RUN_AS_AGENT");
    if (mode == 0 || mode[0] != '1' || mode[1] != 0 || asyncurlsession_run_as_agent == 0) return;
    // With --static-swift-stdlib the constructors of the Swift runtime,
    // libdispatch and Foundation come after this one in the same array:
    // run them first (this one never returns, so none runs twice).
    if (__init_array_start != 0 && __init_array_end != 0) {
        int after = 0;
        for (asyncurlsession_init_fn *entry = __init_array_start; entry < __init_array_end; entry++) {
            if (after && *entry != 0 && *entry != (asyncurlsession_init_fn)-1) (*entry)(argc, argv, envp);
            if (*entry == asyncurlsession_agent_boot) after = 1;
        }
    }
    asyncurlsession_run_as_agent();
    _exit(70);
}
