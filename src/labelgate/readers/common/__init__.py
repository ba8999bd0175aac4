"""What the readers share and no one format owns: the row sink every reader writes into
(``sink``), the box rules (``boxes``), a detection input's image index (``imageindex``), the
shape judges several formats apply (``instances``, ``keypoints``, ``maskfile``), the bounded
looks into a folder that detection makes (``layout``, ``walk``, ``roots``), and the helpers of
large reads (``ordered``, ``memory``, ``arrowcols``).

No module here imports a format's reader; every format may import these.
"""
