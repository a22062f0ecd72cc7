/* Only for pack:all's smoke test under wine: Rust's std on Windows 10+ takes its random bytes from
 * ProcessPrng in bcryptprimitives.dll, a system DLL of every Windows 10 and 11 that wine 8 (Debian
 * 12) does not have yet. This stand-in answers from BCryptGenRandom, which wine has. It is put in
 * the wine prefix's system32, never shipped. */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  return BCryptGenRandom(NULL, data, (ULONG)len, BCRYPT_USE_SYSTEM_PREFERRED_RNG) == 0;
}
