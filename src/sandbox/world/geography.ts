/** Vietnamese provinces, districts, wards and post offices the sandbox's orders travel between. */

export interface PostOffice {
  readonly id: string;
  readonly name: string;
}

export interface Province {
  readonly id: string;
  readonly name: string;
  /** Remote provinces carry the carrier's outer-area (far-region) fee. */
  readonly farRegion: boolean;
  readonly districts: readonly { readonly name: string; readonly wards: readonly string[] }[];
  readonly postOffices: readonly PostOffice[];
}

function province(
  id: string,
  name: string,
  farRegion: boolean,
  districts: [string, string[]][],
  offices: string[],
): Province {
  return {
    id,
    name,
    farRegion,
    districts: districts.map(([districtName, wards]) => ({ name: districtName, wards })),
    postOffices: offices.map((office, i) => ({
      id: `${id}${String(i + 1).padStart(2, '0')}`,
      name: `Bưu cục ${office}`,
    })),
  };
}

export const PROVINCES: readonly Province[] = [
  province(
    'HNI',
    'Hà Nội',
    false,
    [
      ['Quận Cầu Giấy', ['Phường Dịch Vọng', 'Phường Nghĩa Đô']],
      ['Quận Hoàn Kiếm', ['Phường Hàng Bạc', 'Phường Tràng Tiền']],
      ['Quận Đống Đa', ['Phường Láng Thượng', 'Phường Ô Chợ Dừa']],
    ],
    ['Cầu Giấy', 'Hoàn Kiếm', 'Đống Đa'],
  ),
  province(
    'HCM',
    'TP. Hồ Chí Minh',
    false,
    [
      ['Quận 1', ['Phường Bến Nghé', 'Phường Đa Kao']],
      ['Quận Bình Thạnh', ['Phường 25', 'Phường 26']],
      ['Thành phố Thủ Đức', ['Phường Thảo Điền', 'Phường Linh Trung']],
    ],
    ['Quận 1', 'Bình Thạnh', 'Thủ Đức'],
  ),
  province(
    'DNG',
    'Đà Nẵng',
    false,
    [
      ['Quận Hải Châu', ['Phường Thạch Thang', 'Phường Hòa Cường Bắc']],
      ['Quận Sơn Trà', ['Phường An Hải Bắc']],
    ],
    ['Hải Châu', 'Sơn Trà'],
  ),
  province(
    'HPG',
    'Hải Phòng',
    false,
    [
      ['Quận Lê Chân', ['Phường An Biên']],
      ['Quận Ngô Quyền', ['Phường Máy Tơ']],
    ],
    ['Lê Chân', 'Ngô Quyền'],
  ),
  province('CTO', 'Cần Thơ', false, [['Quận Ninh Kiều', ['Phường An Hòa', 'Phường Xuân Khánh']]], ['Ninh Kiều']),
  province(
    'BDG',
    'Bình Dương',
    false,
    [
      ['Thành phố Thủ Dầu Một', ['Phường Phú Cường']],
      ['Thành phố Dĩ An', ['Phường Dĩ An']],
    ],
    ['Thủ Dầu Một', 'Dĩ An'],
  ),
  province('DNI', 'Đồng Nai', false, [['Thành phố Biên Hòa', ['Phường Tân Phong', 'Phường Trảng Dài']]], ['Biên Hòa']),
  province('KHA', 'Khánh Hòa', false, [['Thành phố Nha Trang', ['Phường Lộc Thọ', 'Phường Vĩnh Hải']]], ['Nha Trang']),
  province('NAN', 'Nghệ An', false, [['Thành phố Vinh', ['Phường Hưng Bình', 'Phường Lê Lợi']]], ['Vinh']),
  province('TTH', 'Thừa Thiên Huế', false, [['Thành phố Huế', ['Phường Phú Hội', 'Phường Vĩnh Ninh']]], ['Huế']),
  province('QNH', 'Quảng Ninh', false, [['Thành phố Hạ Long', ['Phường Bãi Cháy', 'Phường Hồng Gai']]], ['Hạ Long']),
  province('LDG', 'Lâm Đồng', false, [['Thành phố Đà Lạt', ['Phường 1', 'Phường 10']]], ['Đà Lạt']),
  province(
    'HGG',
    'Hà Giang',
    true,
    [
      ['Huyện Đồng Văn', ['Thị trấn Đồng Văn', 'Xã Lũng Cú']],
      ['Huyện Mèo Vạc', ['Thị trấn Mèo Vạc']],
    ],
    ['Đồng Văn', 'Mèo Vạc'],
  ),
  province(
    'LCU',
    'Lai Châu',
    true,
    [
      ['Huyện Sìn Hồ', ['Thị trấn Sìn Hồ']],
      ['Huyện Mường Tè', ['Thị trấn Mường Tè']],
    ],
    ['Sìn Hồ'],
  ),
  province('DBN', 'Điện Biên', true, [['Huyện Mường Nhé', ['Xã Mường Nhé']]], ['Mường Nhé']),
  province(
    'CMU',
    'Cà Mau',
    true,
    [
      ['Huyện Ngọc Hiển', ['Xã Đất Mũi']],
      ['Huyện Năm Căn', ['Thị trấn Năm Căn']],
    ],
    ['Năm Căn'],
  ),
];

/** Provinces are matched by name ignoring case, surrounding blanks and Unicode composition. */
function provinceKey(name: string): string {
  return name.normalize('NFC').trim().toLocaleLowerCase('vi');
}

const provinceByName = new Map(PROVINCES.map((p) => [provinceKey(p.name), p]));

export function findProvince(name: string): Province | undefined {
  return provinceByName.get(provinceKey(name));
}

/** Names people in the sandbox's orders carry (receivers, postmen). */
export const PERSON_NAMES: readonly string[] = [
  'Nguyễn Văn An',
  'Trần Thị Bình',
  'Lê Hoàng Cường',
  'Phạm Thu Dung',
  'Hoàng Minh Đức',
  'Vũ Thị Hằng',
  'Đặng Quốc Huy',
  'Bùi Thị Lan',
  'Đỗ Thanh Long',
  'Hồ Ngọc Mai',
  'Ngô Đức Nam',
  'Dương Thị Oanh',
  'Lý Văn Phúc',
  'Phan Thị Quỳnh',
  'Trịnh Công Sơn',
  'Võ Thị Tuyết',
  'Mai Xuân Trường',
  'Đinh Thị Uyên',
];
