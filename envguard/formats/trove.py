"""The `License ::` trove classifiers that name one SPDX licence (pure data). PEP 639 advises mapping only
where the classifier is unambiguous: `BSD License`, `Apache Software License` or `GNU General Public License
(GPL)` name no version, so they stay named licences (the classifier's last part) rather than a guessed id."""

from __future__ import annotations

_OSI = "License :: OSI Approved :: "

SPDX: dict[str, str] = {
    "License :: CC0 1.0 Universal (CC0 1.0) Public Domain Dedication": "CC0-1.0",
    "License :: CeCILL-B Free Software License Agreement (CECILL-B)": "CECILL-B",
    "License :: CeCILL-C Free Software License Agreement (CECILL-C)": "CECILL-C",
    "License :: Aladdin Free Public License (AFPL)": "Aladdin",
    "License :: Nokia Open Source License (NOKOS)": "Nokia",
    **{
        _OSI + classifier: spdx
        for classifier, spdx in {
            "Attribution Assurance License": "AAL",
            "Boost Software License 1.0 (BSL-1.0)": "BSL-1.0",
            "CEA CNRS Inria Logiciel Libre License, version 2.1 (CeCILL-2.1)": "CECILL-2.1",
            "Common Development and Distribution License 1.0 (CDDL-1.0)": "CDDL-1.0",
            "Common Public License": "CPL-1.0",
            "Eclipse Public License 1.0 (EPL-1.0)": "EPL-1.0",
            "Eclipse Public License 2.0 (EPL-2.0)": "EPL-2.0",
            "European Union Public Licence 1.0 (EUPL 1.0)": "EUPL-1.0",
            "European Union Public Licence 1.1 (EUPL 1.1)": "EUPL-1.1",
            "European Union Public Licence 1.2 (EUPL 1.2)": "EUPL-1.2",
            "GNU Affero General Public License v3": "AGPL-3.0-only",
            "GNU Affero General Public License v3 or later (AGPLv3+)": "AGPL-3.0-or-later",
            "GNU General Public License v2 (GPLv2)": "GPL-2.0-only",
            "GNU General Public License v2 or later (GPLv2+)": "GPL-2.0-or-later",
            "GNU General Public License v3 (GPLv3)": "GPL-3.0-only",
            "GNU General Public License v3 or later (GPLv3+)": "GPL-3.0-or-later",
            "GNU Lesser General Public License v3 (LGPLv3)": "LGPL-3.0-only",
            "GNU Lesser General Public License v3 or later (LGPLv3+)": "LGPL-3.0-or-later",
            "Historical Permission Notice and Disclaimer (HPND)": "HPND",
            "IBM Public License": "IPL-1.0",
            "ISC License (ISCL)": "ISC",
            "Intel Open Source License": "Intel",
            "MIT License": "MIT",
            "MIT No Attribution License (MIT-0)": "MIT-0",
            "MirOS License (MirOS)": "MirOS",
            "Motosoto License": "Motosoto",
            "Mozilla Public License 1.0 (MPL)": "MPL-1.0",
            "Mozilla Public License 1.1 (MPL 1.1)": "MPL-1.1",
            "Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0",
            "Mulan Permissive Software License v2 (MulanPSL-2.0)": "MulanPSL-2.0",
            "Nethack General Public License": "NGPL",
            "Nokia Open Source License": "Nokia",
            "Open Group Test Suite License": "OGTSL",
            "Open Software License 3.0 (OSL-3.0)": "OSL-3.0",
            "PostgreSQL License": "PostgreSQL",
            "Python License (CNRI Python License)": "CNRI-Python",
            "Python Software Foundation License": "PSF-2.0",
            "Qt Public License (QPL)": "QPL-1.0",
            "Ricoh Source Code Public License": "RSCPL",
            "SIL Open Font License 1.1 (OFL-1.1)": "OFL-1.1",
            "Sleepycat License": "Sleepycat",
            "Sun Industry Standards Source License (SISSL)": "SISSL",
            "Sun Public License": "SPL-1.0",
            "The Unlicense (Unlicense)": "Unlicense",
            "Universal Permissive License (UPL)": "UPL-1.0",
            "University of Illinois/NCSA Open Source License": "NCSA",
            "Vovida Software License 1.0": "VSL-1.0",
            "W3C License": "W3C",
            "X.Net License": "Xnet",
            "zlib/libpng License": "Zlib",
        }.items()
    },
}


def licence_of(classifier: str) -> str:
    """The SPDX id of a `License ::` classifier where it names one, else its last part (`BSD License`)."""
    return SPDX.get(classifier) or classifier.rsplit("::", 1)[-1].strip()
