/* tjdecode: TurboJPEG's own decode to YUV planes at a DCT scale, with no Go in the way: the
 * CPU microseconds per image of one thread over the given JPEGs (read into memory first).
 * It checks that BenchmarkFolderStages (cgo) times the library and not the binding.
 *   cc -O2 -o /tmp/tjdecode bench/tjdecode/tjdecode.c -lturbojpeg
 *   /tmp/tjdecode 1 $(find bench/data/images2000 -type f | sort)   # 1/8 scale: the Huffman floor
 *   /tmp/tjdecode 4 $(find bench/data/images2000 -type f | sort)   # 4/8, as the image field */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <turbojpeg.h>

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: tjdecode NUM(1-8) FILE...\n");
    return 2;
  }
  int num = atoi(argv[1]), n = argc - 2;
  if (num < 1 || num > 8) {
    fprintf(stderr, "tjdecode: scale %s/8 is not 1/8 to 8/8\n", argv[1]);
    return 2;
  }
  unsigned char **buf = calloc(n, sizeof *buf);
  unsigned long *len = calloc(n, sizeof *len);
  for (int i = 0; i < n; i++) {
    FILE *f = fopen(argv[i + 2], "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0) { perror(argv[i + 2]); return 1; }
    long sz = ftell(f);
    rewind(f);
    buf[i] = malloc(sz > 0 ? sz : 1);
    if (sz <= 0 || fread(buf[i], 1, sz, f) != (size_t)sz) { fprintf(stderr, "tjdecode: %s: short read\n", argv[i + 2]); return 1; }
    len[i] = sz;
    fclose(f);
  }
  tjhandle h = tjInitDecompress();
  size_t cap = 0;
  unsigned char *planes = NULL;
  struct timespec a, b;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
  for (int i = 0; i < n; i++) {
    int w, hh, samp, cs;
    if (tjDecompressHeader3(h, buf[i], len[i], &w, &hh, &samp, &cs) != 0) {
      fprintf(stderr, "tjdecode: %s: %s\n", argv[i + 2], tjGetErrorStr2(h));
      return 1;
    }
    int sw = (w * num + 7) / 8, sh = (hh * num + 7) / 8;
    size_t need = tjBufSizeYUV2(sw, 1, sh, samp);
    if (need > cap) { free(planes); planes = malloc(need); cap = need; }
    if (tjDecompressToYUV2(h, buf[i], len[i], planes, sw, 1, sh, 0) != 0) {
      fprintf(stderr, "tjdecode: %s: %s\n", argv[i + 2], tjGetErrorStr2(h));
      return 1;
    }
  }
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
  printf("scale %d/8: %.1f cpu-us/img over %d images\n", num,
         ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / n, n);
  tjDestroy(h);
  return 0;
}
