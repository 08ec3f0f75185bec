// The PDF drawer: poppler (its C++ interface, the same Splash rasterizer as
// `pdftoppm`) loaded and warmed once, then one forked child per request, so that a
// request costs a fork and the drawing, not a process start.
//
// Why a fork per request: poppler parses what the user sent. A child that parsed one
// document and exits can leak nothing into the next request, nor keep what a
// malicious file did to it; the warm parent never opens a user's file. Every child
// dies with its parent (PR_SET_PDEATHSIG), which the service kills on a timeout, and
// inherits its memory limit and empty environment (see `src/media/pdf/drawer.rs`).
//
// Requests on stdin, each six fields ending in a NUL byte: the PDF's path, the output
// path, the page (from 1), the width and height to draw (pixels; -1 follows the page's
// shape from the other; both 0: only read the page's size), and the most pixels
// allowed. One line answers each on stdout:
//
//   size PAGES WIDTH HEIGHT   the page's size in points, turned by its /Rotate
//   drawn WIDTH HEIGHT        the page drawn to OUTPUT as a 24-bit BMP
//   large WIDTH HEIGHT        not drawn: that many pixels is past the limit
//   memory                    not drawn: its bitmap alone is past the memory limit
//   encrypted | damaged | no-page | crashed
//
// End of file on stdin ends the drawer.

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-image.h>
#include <poppler-page-renderer.h>
#include <poppler-page.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

// A one-page document of text in the base-14 Helvetica and a filled shape, drawn once
// at start: it loads the font machinery (fontconfig's configuration, the substitute
// font's file) that every request would otherwise load again.
const char WARM_UP[] =
    "%PDF-1.4\n"
    "1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
    "2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n"
    "3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R "
    "/Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> >> endobj\n"
    "4 0 obj << /Length 78 >> stream\n"
    "BT /F1 24 Tf 10 50 Td (Warm) Tj /F2 12 Tf (up) Tj ET 0.5 g 10 10 50 20 re f\n"
    "endstream endobj\n"
    "5 0 obj << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> endobj\n"
    "6 0 obj << /Type /Font /Subtype /Type1 /BaseFont /Times-Roman >> endobj\n"
    "trailer << /Root 1 0 R >>\n"
    "%%EOF\n";

void quiet(const std::string &, void *) {}

// Writes `line` to stdout in one call, as the answer to the request.
void answer(const std::string &line) {
    std::string out = line + "\n";
    ssize_t written = write(STDOUT_FILENO, out.data(), out.size());
    (void)written;
}

// Draws `page` as `pdftoppm` does by default: anti-aliased shapes and text, on white.
poppler::image draw(const poppler::page *page, double xres, double yres, int w, int h) {
    poppler::page_renderer r;
    r.set_render_hint(poppler::page_renderer::antialiasing, true);
    r.set_render_hint(poppler::page_renderer::text_antialiasing, true);
    r.set_image_format(poppler::image::format_bgr24);
    return r.render_page(page, xres, yres, 0, 0, w, h);
}

void put_u32(std::string &s, uint32_t v) {
    for (int i = 0; i < 4; i++) s.push_back(char((v >> (8 * i)) & 0xff));
}

// A 24-bit top-down BMP of `img` (format_bgr24, rows padded as the BMP wants).
bool write_bmp(const poppler::image &img, const char *path) {
    const int w = img.width(), h = img.height();
    const uint32_t row = (uint32_t(w) * 3 + 3) & ~3u;
    std::string head;
    head += "BM";
    put_u32(head, 54 + row * uint32_t(h));
    put_u32(head, 0);
    put_u32(head, 54);
    put_u32(head, 40);
    put_u32(head, uint32_t(w));
    put_u32(head, uint32_t(-h));  // negative: rows top to bottom
    head.push_back(1), head.push_back(0);   // planes
    head.push_back(24), head.push_back(0);  // bits per pixel
    for (int i = 0; i < 6; i++) put_u32(head, 0);
    FILE *f = std::fopen(path, "wb");
    if (!f) return false;
    bool ok = std::fwrite(head.data(), 1, head.size(), f) == head.size();
    const char *data = img.const_data();
    const int stride = img.bytes_per_row();
    std::string pad(row - uint32_t(w) * 3, '\0');
    for (int y = 0; ok && y < h; y++) {
        ok = std::fwrite(data + size_t(y) * stride, 1, size_t(w) * 3, f) == size_t(w) * 3 &&
             std::fwrite(pad.data(), 1, pad.size(), f) == pad.size();
    }
    return std::fclose(f) == 0 && ok;
}

struct Request {
    std::string input, output;
    long page, width, height;
    double max_pixels;
};

// Reads one NUL-ended field; false at end of input.
bool field(std::string &out) {
    out.clear();
    int c;
    while ((c = std::getchar()) != EOF && c != 0) out.push_back(char(c));
    return c == 0;
}

bool read_request(Request &r) {
    std::string page, width, height, limit;
    if (!(field(r.input) && field(r.output) && field(page) && field(width) &&
          field(height) && field(limit)))
        return false;
    r.page = std::strtol(page.c_str(), nullptr, 10);
    r.width = std::strtol(width.c_str(), nullptr, 10);
    r.height = std::strtol(height.c_str(), nullptr, 10);
    r.max_pixels = std::strtod(limit.c_str(), nullptr);
    return true;
}

// What the child does with one request: its answer (a crash before it is answered
// is the parent's to tell).
std::string serve(const Request &r) {
    std::unique_ptr<poppler::document> doc(poppler::document::load_from_file(r.input));
    if (!doc) return "damaged";
    if (doc->is_locked() || doc->is_encrypted()) return "encrypted";
    const int pages = doc->pages();
    if (pages < 1) return "damaged";
    if (r.page < 1 || r.page > pages) return "no-page";
    std::unique_ptr<poppler::page> page(doc->create_page(int(r.page - 1)));
    if (!page) return "damaged";
    const poppler::rectf box = page->page_rect(poppler::crop_box);
    double pw = box.width(), ph = box.height();
    const auto turn = page->orientation();
    if (turn == poppler::page::landscape || turn == poppler::page::seascape) std::swap(pw, ph);
    if (!(std::isfinite(pw) && std::isfinite(ph) && pw > 0 && ph > 0)) return "damaged";
    if (r.width == 0 && r.height == 0) {
        // Room for any finite double in full (a hostile page may be 1e308 points wide).
        char line[768];
        std::snprintf(line, sizeof line, "size %d %.4f %.4f", pages, pw, ph);
        return line;
    }
    auto side = [](double v) { return std::min(std::max(v, 1.0), 1e9); };
    // As `pdftoppm -scale-to-x W -scale-to-y -1`: one resolution from the side given,
    // the other side its page's length at it, rounded up.
    double w, h, xres = 72.0, yres = 72.0;
    if (r.width > 0 && r.height > 0) {
        w = double(r.width), h = double(r.height);
        xres = 72.0 * w / pw, yres = 72.0 * h / ph;
    } else if (r.width > 0) {
        w = double(r.width), xres = yres = 72.0 * w / pw;
        h = side(std::ceil(ph * yres / 72.0));
    } else if (r.height > 0) {
        h = double(r.height), xres = yres = 72.0 * h / ph;
        w = side(std::ceil(pw * xres / 72.0));
    } else {
        w = side(std::round(pw)), h = side(std::round(ph));
    }
    char line[96];
    if (w * h > r.max_pixels || w > 65535 || h > 65535) {
        std::snprintf(line, sizeof line, "large %.0f %.0f", w, h);
        return line;
    }
    // Splash's bitmap (4 bytes a pixel with its alpha row) past the data limit would
    // end the child in poppler's allocator with nothing said: say why instead.
    struct rlimit limit;
    if (getrlimit(RLIMIT_DATA, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        w * h * 4 > double(limit.rlim_cur))
        return "memory";
    const poppler::image img = draw(page.get(), xres, yres, int(w), int(h));
    if (!img.is_valid() || img.width() != int(w) || img.height() != int(h))
        return "damaged";
    if (!write_bmp(img, r.output.c_str())) return "damaged";
    std::snprintf(line, sizeof line, "drawn %d %d", img.width(), img.height());
    return line;
}

}  // namespace

int main() {
    poppler::set_debug_error_function(quiet, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    // Kept for the drawer's life: poppler's global state lives while a document does.
    std::unique_ptr<poppler::document> warm(
        poppler::document::load_from_raw_data(WARM_UP, int(sizeof WARM_UP - 1)));
    if (warm) {
        std::unique_ptr<poppler::page> page(warm->create_page(0));
        if (page) draw(page.get(), 72.0, 72.0, 200, 100);
    }
    answer("ready");
    Request r;
    const pid_t self = getpid();
    while (read_request(r)) {
        std::fflush(stdout);
        const pid_t child = fork();
        if (child < 0) {
            answer("crashed");
            continue;
        }
        if (child == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            // Killed before the line above took effect: its parent is gone already.
            if (getppid() != self) _exit(1);
            answer(serve(r));
            _exit(0);
        }
        int status = 0;
        pid_t waited;
        do {
            waited = waitpid(child, &status, 0);
        } while (waited < 0 && errno == EINTR);
        if (waited < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) answer("crashed");
    }
    return 0;
}
