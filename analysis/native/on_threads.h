// Runs a piece of work on several threads at once, this one among them, and waits for all: the
// reader's and the lister's threads each take their next item from a shared atomic counter inside
// `work`.
#pragma once

#include <algorithm>
#include <thread>
#include <vector>

namespace sbnative {

template <class Work> void on_threads(int threads, Work work) {
    std::vector<std::thread> pool;
    for (int t = 1; t < std::max(1, threads); t++)
        pool.emplace_back(work);
    work();
    for (auto &t : pool)
        t.join();
}

} // namespace sbnative
