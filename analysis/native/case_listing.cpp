// Lists the case directories of a campaign's raw/ for the analysis's loader
// (analysis/records/load.py: case_files): twenty thousand directories listed from Python take a
// second, most of it the interpreter's work per name. Here a directory is only sorted into "its
// records file and nothing else the loader reads" (its listing is then that one file and its size)
// or "something else too", which the loader lists itself by sbcore/layout.py's rules.
#include "on_threads.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

extern "C" {

// For each raw/<case_ids[i]>: sizes[i] = the size of its file named `records` (-1: none), plain[i]
// = 1 when it holds no other name than `records` and `ignored` (0: another file, or the directory
// could not be read). `threads` threads list side by side.
void sbl_list(const char *raw, int64_t n, const char *const *case_ids, const char *records,
              const char *ignored, int threads, int64_t *sizes, uint8_t *plain) {
    int raw_fd = open(raw, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    std::atomic<int64_t> next{0};
    auto work = [&] {
        for (int64_t i; (i = next.fetch_add(1)) < n;) {
            sizes[i] = -1;
            plain[i] = 0;
            int fd = raw_fd < 0 ? -1
                                : openat(raw_fd, case_ids[i],
                                         O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
            DIR *dir = fd < 0 ? nullptr : fdopendir(fd);
            if (!dir) {
                if (fd >= 0)
                    close(fd);
                continue;
            }
            bool only = true;
            while (struct dirent *entry = readdir(dir)) {
                const char *name = entry->d_name;
                if (!std::strcmp(name, ".") || !std::strcmp(name, "..") ||
                    !std::strcmp(name, ignored))
                    continue;
                struct stat st;
                if (!std::strcmp(name, records) &&
                    fstatat(dirfd(dir), name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
                    sizes[i] = int64_t(st.st_size);
                else
                    only = false;
            }
            plain[i] = only;
            closedir(dir);
        }
    };
    sbnative::on_threads(threads, work);
    if (raw_fd >= 0)
        close(raw_fd);
}
}
