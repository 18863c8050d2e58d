/*
 * A stand-in for Windows' bcryptprimitives.dll, for running Outpost's
 * Windows binary under Wine versions that lack it (Wine 8.0 in Debian 12).
 * The Go runtime loads ProcessPrng from this DLL at start; this stub serves
 * it from advapi32's RtlGenRandom (exported as SystemFunction036), which
 * Wine implements. Test use only: it is never shipped.
 *
 * Build: x86_64-w64-mingw32-gcc -shared -s -o bcryptprimitives.dll bcryptprimitives.c
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
	while (size > 0) {
		ULONG n = size > 0x40000000 ? 0x40000000 : (ULONG)size;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		size -= n;
	}
	return TRUE;
}
